"""links.consolidated: a sleep consolidation, with its rule and every decision it made.

The job decides on the state at some position; the fold applies the decision where the
event sits in the log (engine/events/consolidation.py), so a replay reproduces it exactly. The
report is what the decision did to the state it was made on, kept for the audit.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

from assocmem.engine.errors import InvalidEvent
from assocmem.engine.events.consolidation import Decision, Effect, Rule, apply_decision
from assocmem.engine.events.payload import are_ids, check_concepts, check_ids
from assocmem.engine.events.record import EventType, Payload
from assocmem.engine.state.state import State

if TYPE_CHECKING:
    from assocmem.engine.events.envelope import Event


def build(decision: Decision, effect: Effect, decided_at: str) -> Payload:
    return {
        "rule": decision.rule.payload(),
        "pruned": list(decision.pruned),
        "merged": [list(pair) for pair in decision.merged],
        "report": dataclasses.asdict(effect),
        "decided_at": decided_at,
    }


def check(data: Payload) -> None:
    rule = data.get("rule")
    if not isinstance(rule, dict):
        raise InvalidEvent("rule is missing: expected the consolidation's parameters")
    Rule.of(rule)
    pruned = data.get("pruned")
    if not isinstance(pruned, list):
        raise InvalidEvent("pruned is invalid: expected a list of concepts")
    for start in range(0, len(pruned), 256):
        check_concepts(pruned[start : start + 256], "pruned")
    merged = data.get("merged")
    # Passes in C: a consolidation may merge a million memories
    if not isinstance(merged, list) or not (
        set(map(type, merged)) <= {list} and set(map(len, merged)) <= {2}
    ):
        raise InvalidEvent("merged is invalid: expected [superseded id, kept id] pairs")
    if not are_ids([memory_id for pair in merged for memory_id in pair]):
        for pair in merged:  # to name the pair at fault
            check_ids(pair, "merged", 2)


def decision_of(data: Payload) -> Decision:
    merged: list[Any] = data["merged"]
    return Decision(Rule.of(data["rule"]), tuple(data["pruned"]), tuple(map(tuple, merged)))


def apply(state: State, event: Event) -> None:
    apply_decision(state, decision_of(event.data))


def _leaving_memory_links(data: Payload) -> Payload:
    """Version 1 -> 2: a consolidation recorded before the taught half-life applied to the
    links between memories left them as they were."""
    rule = data.get("rule")
    if not isinstance(rule, dict):
        return data  # `check` names what is wrong
    return {**data, "rule": {**rule, "decays_memory_links": False}}


LINKS_CONSOLIDATED = EventType(
    "links.consolidated", 2, check, apply, build, upcasters={1: _leaving_memory_links}
)
