"""The fold job: fold a tenant's log after its latest snapshot and publish the next snapshot.

A snapshot is the whole state (tens of MB at 50,000 memories): publishing one for
every few events (a read's access counts arrive every 2 s) would keep a core busy
encoding and Redis busy rewriting its AOF, next to the readers. So the job folds
every tail it is given, but publishes once `snapshot_every` events have gathered,
or once the oldest of them has waited `snapshot_after` seconds; readers fold the
tail themselves and never wait for a snapshot.
"""

from __future__ import annotations

import dataclasses
import logging
import time
from collections.abc import Iterable, Iterator

import orjson
import redis

from assocmem.engine.fold import Rejection
from assocmem.engine.position import ZERO
from assocmem.engine.snapshot import dump_state
from assocmem.engine.state import State

from .event_log import Entry
from .heap import freeze_long_lived
from .keys import dead_letter_key, fold_wanted_key, log_key
from .replay import fold_entries, starting_state
from .runtime import Runtime, current_runtime

log = logging.getLogger(__name__)

PROGRESS_EVERY = 50_000
"""Events between progress lines of a long fold."""


@dataclasses.dataclass(slots=True)
class _Folded:
    state: State
    base: str
    """Position of the snapshot the state was folded from."""
    unpublished: int = 0
    """Events folded after `base`."""
    waiting_since: float | None = None
    """time.monotonic() when the oldest unpublished event was folded."""


_folded: dict[str, _Folded] = {}
"""Per tenant, the state this process folded (workers run jobs in-process, unforked)."""


def fold_tenant(tenant: str) -> dict[str, object]:
    """RQ entry point; safe to run twice or concurrently (the publish is a compare-and-set)."""
    return fold_and_publish(current_runtime(), tenant)


def fold_and_publish(runtime: Runtime, tenant: str, force: bool = False) -> dict[str, object]:
    """Fold the tail; publish a snapshot if enough events gathered (or `force`)."""
    # Clear the flag before reading: an append landing during this fold sets it again.
    runtime.data.delete(fold_wanted_key(tenant))
    expected = runtime.snapshots.latest_position(tenant)
    folded = _folded.get(tenant)
    # The state this process folded continues the latest snapshot, unless another worker has
    # published since: reuse it rather than decode the whole snapshot again.
    if folded is None or folded.base != (expected or ZERO) or not _in_log(runtime, tenant, folded):
        folded = _Folded(starting_state(runtime.snapshots, tenant, None), expected or ZERO)
    _folded.pop(tenant, None)
    state = folded.state
    start = state.position
    marks = {"next": PROGRESS_EVERY}

    def progress(s: object) -> None:
        if len(state.memories) >= marks["next"]:
            log.info("fold %s: %d memories, at %s", tenant, len(state.memories), state.position)
            marks["next"] += PROGRESS_EVERY

    def counted(chunks: Iterable[list[Entry]]) -> Iterator[list[Entry]]:
        for chunk in chunks:
            folded.unpublished += len(chunk)
            yield chunk

    chunks = counted(runtime.log.iter_entries(tenant, state.position))
    rejections = fold_entries(state, chunks, progress=progress)
    freeze_long_lived()
    dead_letter(runtime.data, tenant, rejections)
    _folded[tenant] = folded  # only now: a failed fold or dead letter starts again next time
    if folded.unpublished and folded.waiting_since is None:
        folded.waiting_since = time.monotonic()
    if state.position == folded.base or not (force or _due(runtime, folded)):
        if state.position != folded.base:  # come back: the time limit may pass with no append
            runtime.data.set(fold_wanted_key(tenant), 1)
        return {"tenant": tenant, "published": False, "position": state.position}
    published = runtime.snapshots.publish(tenant, dump_state(state), state.position, expected)
    if published:
        _folded[tenant] = _Folded(state, state.position)
    else:
        _folded.pop(tenant, None)
    log.info(
        "fold %s: %s -> %s, published=%s, rejected=%d",
        tenant,
        start,
        state.position,
        published,
        len(rejections),
    )
    return {
        "tenant": tenant,
        "published": published,
        "position": state.position,
        "rejected": len(rejections),
    }


def _in_log(runtime: Runtime, tenant: str, folded: _Folded) -> bool:
    """Whether the log still holds the last event folded (it is not a log rewritten since)."""
    position = folded.state.position
    return position == ZERO or bool(runtime.data.xrange(log_key(tenant), position, position))


def _due(runtime: Runtime, folded: _Folded) -> bool:
    settings = runtime.settings
    waited = time.monotonic() - (folded.waiting_since or time.monotonic())
    return folded.unpublished >= settings.snapshot_every or waited >= settings.snapshot_after


def dead_letter(client: redis.Redis, tenant: str, rejections: list[Rejection]) -> None:
    """Record rejected events under their own position, so a second fold records nothing twice."""
    for rejection in rejections:
        try:
            client.xadd(
                dead_letter_key(tenant),
                {"reason": orjson.dumps(rejection.reason)},
                id=rejection.position,
            )
        except redis.ResponseError as exc:
            if "equal or smaller" not in str(exc):
                raise
