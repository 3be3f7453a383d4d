"""An append acknowledged only once a replica holds it (`ASSOCMEM_WRITE_REPLICAS`, which
`up --cluster` sets to 1): without the replica, it is refused as a state that passes (a
503 to send again), and the resend with its idempotency key counts once."""

from __future__ import annotations

import pytest
import redis

from assocmem.workers.errors import StoreUnavailable
from assocmem.workers.store.redis.stores import RedisEventLog
from tests.stores import note


def test_an_append_no_replica_holds_is_not_acknowledged_and_its_resend_counts_once(
    redis_url: str,
) -> None:
    client = redis.Redis.from_url(redis_url)
    waiting = RedisEventLog(client, replicas=1, replica_wait_ms=50)  # this Redis has none
    with pytest.raises(StoreUnavailable, match="reached 0 of 1 replicas"):
        waiting.append("default", [note(["billing"], key="k1")])
    plain = RedisEventLog(client)
    [again] = plain.append("default", [note(["billing"], key="k1")])
    assert again.is_duplicate, "the first try was stored: its resend is the same event"
    assert plain.length("default") == 1
    client.close()
