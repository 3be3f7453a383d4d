"""The fold job: fold a tenant's log after its latest snapshot and publish the next snapshot."""

from __future__ import annotations

import logging

import orjson
import redis

from assocmem.engine.fold import Rejection
from assocmem.engine.snapshot import dump_state
from assocmem.engine.state import State

from .keys import dead_letter_key, fold_wanted_key
from .replay import fold_log, starting_state
from .runtime import Runtime, current_runtime

log = logging.getLogger(__name__)

PROGRESS_EVERY = 50_000
"""Events between progress lines of a long fold."""


_published: dict[str, State] = {}
"""Per tenant, the state this process last published (workers run jobs in-process, unforked)."""


def fold_tenant(tenant: str) -> dict[str, object]:
    """RQ entry point; safe to run twice or concurrently (the publish is a compare-and-set)."""
    return fold_and_publish(current_runtime(), tenant)


def fold_and_publish(runtime: Runtime, tenant: str) -> dict[str, object]:
    # Clear the flag before reading: an append landing during this fold sets it again.
    runtime.data.delete(fold_wanted_key(tenant))
    expected = runtime.snapshots.latest_position(tenant)
    cached = _published.get(tenant)
    # The state this process last published is the latest snapshot, unless another worker has
    # published since: reuse it rather than decode the whole snapshot again.
    is_cached = cached is not None and cached.position == expected
    state = cached if is_cached else starting_state(runtime.snapshots, tenant, None)
    start = state.position
    marks = {"next": PROGRESS_EVERY}

    def progress(s: object) -> None:
        if len(state.memories) >= marks["next"]:
            log.info("fold %s: %d memories, at %s", tenant, len(state.memories), state.position)
            marks["next"] += PROGRESS_EVERY

    rejections = fold_log(state, runtime.log, tenant, progress=progress)
    dead_letter(runtime.data, tenant, rejections)
    if state.position == start:
        _published[tenant] = state
        return {"tenant": tenant, "published": False, "position": start}
    published = runtime.snapshots.publish(tenant, dump_state(state), state.position, expected)
    if published:
        _published[tenant] = state
    else:
        _published.pop(tenant, None)
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
