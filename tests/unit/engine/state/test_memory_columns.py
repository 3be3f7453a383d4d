"""Blocks of rows joined into one (what a fold does to the small blocks it makes) hold
every row as it was: text, concepts, names, activity fields and supersessions."""

from __future__ import annotations

import dataclasses
from typing import Any
from unittest import mock

from assocmem.engine.events.fold import fold
from assocmem.engine.state import state as state_module
from assocmem.engine.state.memory_columns import joined_blocks
from assocmem.engine.state.memory_rows import LoadedMemories
from assocmem.engine.state.state import State
from tests.unit.engine.make_events import activity, written


def row_of(block: LoadedMemories, local: int) -> tuple[Any, ...]:
    def name(table: list[str], code: int) -> str | None:
        return None if code < 0 else table[code]

    return (
        block.ids[local],
        block.text(local),
        block.indices(local).tolist(),
        int(block.core[local]),
        int(block.matched[local]),
        name(block.agents, int(block.agent[local])),
        name(block.users, int(block.user[local])),
        name(block.sessions, int(block.session[local])),
        name(block.namespaces, int(block.namespace[local])),
        name(block.kinds, int(block.kind[local])),
        block.meta.get(local),
        block.superseded_by.get(local),
    )


def test_joined_blocks_hold_each_row_as_its_own_block_did() -> None:
    batches = [
        [written(1, ["a", "b"], text="première note"), activity(2, ["b", "c"])],
        [
            dataclasses.replace(written(3, ["c", "d"]), agent="other", user="u1"),
            dataclasses.replace(written(4, ["a", "d"]), session="s", namespace="n"),
        ],
        [activity(5, ["e"], category="ops"), written(6, ["a", "e"], text="ünïcode ✓")],
    ]
    state = State()
    with mock.patch.object(state_module, "JOINED_AT_ONCE", 100):  # each batch a block
        for batch in batches:
            fold(state, batch)
    blocks = state.rows.blocks()
    assert [len(b) for b in blocks] == [2, 2, 2]
    state.supersede_row(3, "6-0")  # rows no object was made of: their blocks tell
    state.supersede_row(4, "6-0")
    rows = [row_of(b, local) for b in blocks for local in range(len(b))]

    joined = joined_blocks(blocks)

    assert joined.start == 0 and len(joined) == 6
    assert [row_of(joined, local) for local in range(6)] == rows
    assert rows[3][-1] == rows[4][-1] == "6-0"
    assert rows[4][-2] == {"category": "ops", "tags": [], "source": None}
