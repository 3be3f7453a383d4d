"""Keeping a state's objects out of Python's cyclic garbage collector.

A state of tens of thousands of memories is hundreds of thousands of tracked objects
(memories, concept strings, dicts) that live as long as the process. Each full
collection walks all of them, for seconds, landing in the middle of whichever read
triggered it. Frozen objects are never
walked again; the state only grows by folding, so freezing after each fold keeps
collections down to what requests allocate.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator

YOUNG_OBJECTS = 50_000
"""Containers allocated (less those freed) between two collections of the young generation
in a long-lived process; Python's default is 700. A batch request makes tens of thousands
that live until its response and then go: every 700 the collector walked them, a few
per cent of the API's time under batches. At this many it runs a few hundred times less
often (bench/collector_time.py), and finds mostly garbage: at most this many objects
wait for it, a few MB. The price: one collection, when it comes, takes tens of
milliseconds, about what each of the full collections the default made took."""


def collect_young_less_often() -> None:
    gc.set_threshold(YOUNG_OBJECTS, *gc.get_threshold()[1:])


def freeze_long_lived() -> None:
    """Move every object tracked so far to the permanent generation (gc.freeze).

    Cyclic garbage alive at this moment would never be collected; folding creates none,
    so this is called right after a fold, not in the middle of a request.
    """
    gc.freeze()


@contextlib.contextmanager
def collection_paused() -> Iterator[None]:
    """No collection while a fold runs, and what it made frozen after.

    A fold allocates millions of objects that all live on (and no cycles): collections in
    the middle of one only walk them, a fifth of a fold's time at 20,000 commit messages.
    """
    with collection_held():
        try:
            yield
        finally:
            freeze_long_lived()


@contextlib.contextmanager
def collection_held() -> Iterator[None]:
    """No collection while a job makes many objects that go when it returns (an audit's
    entries and state, a snapshot's header): collections would walk them again and again,
    a tenth of an audit at a million events, half of encoding a state of 50,000 memories.
    Not frozen: their cycles are collected after."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
