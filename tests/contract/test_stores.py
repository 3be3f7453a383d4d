"""The store contract: the in-memory twins and the Redis stores behave alike."""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Iterator

import pytest
import redis

from assocmem.engine.events.envelope import encode_event
from assocmem.engine.events.fold import Rejection
from assocmem.engine.position import ZERO, Position
from assocmem.workers.errors import KeyConflict
from assocmem.workers.runtime.services import Runtime
from assocmem.workers.runtime.settings import Settings
from assocmem.workers.store.ports import (
    Ladder,
    iter_entries,
    latest_snapshot,
    snapshot_digest,
    snapshots_at_or_before,
)
from assocmem.workers.store.redis.keys import idempotency_key
from tests.stores import CONTRACT_KINDS, Clock, make_runtime, note, write


@pytest.fixture(params=CONTRACT_KINDS)
def runtime(request: pytest.FixtureRequest) -> Iterator[Runtime]:
    yield from make_runtime(request, request.param, Clock())


def test_append_gives_increasing_positions_registers_the_tenant_and_flags_a_fold(
    runtime: Runtime,
) -> None:
    assert runtime.log.tenants() == [] and not runtime.log.fold_wanted("default")
    positions = write(runtime, ["a"], ["b"], ["c"])
    assert positions == sorted(positions) and len(set(positions)) == 3
    assert [p for p, _ in runtime.log.entries("default", ZERO)] == positions
    mark = runtime.log.fold_wanted("default")
    assert mark
    assert runtime.log.tenants() == ["default"]
    assert runtime.log.last_position("default") == positions[-1]
    assert runtime.log.length("default") == 3 and runtime.log.has("default", positions[1])
    assert not runtime.log.has("default", Position(positions[-1].ms + 1, 0))
    runtime.log.clear_fold_wanted("default", mark)
    assert not runtime.log.fold_wanted("default")


def test_the_fold_flag_stays_up_when_an_append_came_after_its_mark_was_read(
    runtime: Runtime,
) -> None:
    write(runtime, ["a"])
    mark = runtime.log.fold_wanted("default")
    write(runtime, ["b"])  # lands while a fold of "a" runs
    runtime.log.clear_fold_wanted("default", mark)
    assert runtime.log.fold_wanted("default") > mark
    runtime.log.clear_fold_wanted("default", runtime.log.fold_wanted("default"))
    assert not runtime.log.fold_wanted("default")


def test_a_due_time_is_kept_until_cleared(runtime: Runtime) -> None:
    assert runtime.log.fold_due("default") is None
    runtime.log.set_fold_due("default", 1234.5)
    assert runtime.log.fold_due("default") == 1234.5 and runtime.log.fold_due("other") is None
    runtime.log.set_fold_due("default", None)
    assert runtime.log.fold_due("default") is None


def test_the_same_idempotency_key_is_stored_once(runtime: Runtime) -> None:
    first = runtime.log.append("default", [note(["x"], key="k1")])[0]
    again = runtime.log.append("default", [note(["x"], key="k1"), note(["y"], key="k1")])
    assert [a.position for a in again] == [first.position, first.position]
    assert not first.is_duplicate and all(a.is_duplicate for a in again)
    assert runtime.log.length("default") == 1


def test_a_key_of_a_forgotten_position_appends_again_and_the_others_stay(
    runtime: Runtime,
) -> None:
    [first] = runtime.log.append("default", [note(["a"], key="k1")])
    [second] = runtime.log.append("default", [note(["b"], key="k2")])
    runtime.log.forget_positions("default", [first.position])
    again = runtime.log.append("default", [note(["a"], key="k1"), note(["b"], key="k2")])
    assert not again[0].is_duplicate and again[0].position > second.position
    assert again[1].is_duplicate and again[1].position == second.position


def test_each_stored_event_names_the_entry_before_it(runtime: Runtime) -> None:
    [first] = runtime.log.append("default", [note(["a"], key="k1")])
    batch = runtime.log.append("default", [note(["b"]), note(["a"], key="k1"), note(["c"])])
    assert first.previous == ZERO
    assert [a.previous for a in batch] == [first.position, None, batch[0].position]


def test_entries_are_read_after_a_position_exclusively_and_in_batches(runtime: Runtime) -> None:
    positions = write(runtime, *([str(i)] for i in range(5)))
    inside = runtime.log.entries("default", positions[1], upto=positions[3])
    assert [p for p, _ in inside] == positions[2:4]
    batches = list(iter_entries(runtime.log, "default", ZERO, batch=2))
    assert [len(b) for b in batches] == [2, 2, 1]


def test_entries_are_read_at_positions_archived_or_not_and_missing_ones_are_left_out(
    runtime: Runtime,
) -> None:
    positions = write(runtime, *([str(i)] for i in range(6)))
    assert runtime.log.archive("default", positions[2], 100) is not None
    wanted = [positions[0], positions[2], Position(positions[3].ms, positions[3].seq + 99)]
    wanted += [positions[5]]
    found = runtime.log.entries_at("default", sorted(wanted))
    everything = dict(runtime.log.entries("default", ZERO))
    assert found == [(p, everything[p]) for p in (positions[0], positions[2], positions[5])]
    assert runtime.log.entries_at("default", []) == []


def test_tenants_keep_their_own_logs(runtime: Runtime) -> None:
    write(runtime, ["a"], tenant="acme")
    write(runtime, ["b"], ["c"], tenant="globex")
    assert runtime.log.tenants() == ["acme", "globex"]
    assert runtime.log.length("acme") == 1 and runtime.log.length("globex") == 2


def test_a_waiting_reader_wakes_when_an_entry_arrives(runtime: Runtime) -> None:
    assert not runtime.log.wait_for_entries("default", ZERO, 0.05)
    timer = threading.Timer(0.1, lambda: write(runtime, ["late"]))
    timer.start()
    assert runtime.log.wait_for_entries("default", ZERO, 5.0)
    timer.join()


def test_a_raw_entry_is_stored_as_given(runtime: Runtime) -> None:
    position = runtime.log.append_raw("default", b"{broken")
    assert runtime.log.entries("default", ZERO) == [(position, b"{broken")]
    assert runtime.log.fold_wanted("default")


def test_entries_appended_at_their_positions_only_after_the_logs_end(runtime: Runtime) -> None:
    kept = [(Position(5, 0), b"{first"), (Position(5, 1), b"{second")]
    assert runtime.log.append_at("acme", kept)
    assert runtime.log.entries("acme", ZERO) == kept
    assert "acme" in runtime.log.tenants() and runtime.log.fold_wanted("acme")
    assert not runtime.log.append_at("acme", [(Position(5, 1), b"{again")])  # not after the end
    assert not runtime.log.append_at("acme", [(Position(4, 0), b"{earlier")])
    assert runtime.log.append_at("acme", [(Position(9, 0), b"{later")])
    assert runtime.log.entries("acme", ZERO)[-1] == (Position(9, 0), b"{later")


def test_a_dead_letter_recorded_twice_is_kept_once(runtime: Runtime) -> None:
    [position] = write(runtime, ["a"])
    rejection = Rejection(position, "event at 1-0 is not JSON")
    runtime.log.add_dead_letters("default", [rejection])
    runtime.log.add_dead_letters("default", [rejection])
    assert runtime.log.dead_letters("default") == [rejection]
    assert runtime.log.dead_letter_count("default") == 1


def test_dead_letters_are_listed_oldest_first_up_to_a_limit_and_counted_in_all(
    runtime: Runtime,
) -> None:
    positions = write(runtime, ["a"], ["b"], ["c"])
    rejections = [Rejection(p, f"reason {n}") for n, p in enumerate(positions)]
    runtime.log.add_dead_letters("default", rejections)
    assert runtime.log.dead_letters("default", 2) == rejections[:2]
    assert runtime.log.dead_letters("default") == rejections
    assert runtime.log.dead_letter_count("default") == 3


def test_publish_is_a_compare_and_set_and_keeps_the_newest(runtime: Runtime) -> None:
    snapshots = runtime.snapshots
    assert snapshots.publish("default", b"one", Position(5, 0), expected=None)
    assert not snapshots.publish("default", b"two", Position(6, 0), expected=None)
    assert snapshots.publish("default", b"two", Position(6, 0), expected=Position(5, 0))
    assert latest_snapshot(snapshots, "default") == (Position(6, 0), b"two")
    found = snapshots_at_or_before(snapshots, "default", Position(5, 9))
    assert next(found) == (Position(5, 0), b"one")
    assert list(snapshots_at_or_before(snapshots, "default", Position(4, 0))) == []
    snapshots.drop("default")
    assert snapshots.latest_position("default") is None and snapshots.positions("default") == []


def test_only_the_newest_snapshots_are_kept(runtime: Runtime) -> None:
    snapshots = runtime.snapshots
    kept = runtime.settings.snapshots_kept
    expected = None
    for n in range(1, kept + 3):
        assert snapshots.publish("default", b"s%d" % n, Position(n, 0), expected)
        expected = Position(n, 0)
    assert snapshots.positions("default") == [Position(n, 0) for n in range(3, kept + 3)]
    assert snapshots.load("default", Position(1, 0)) is None


def test_the_ladder_keeps_the_newest_the_last_of_each_recent_hour_and_day_and_their_bases(
    runtime: Runtime,
) -> None:
    snapshots = runtime.snapshots
    snapshots._rule = Ladder(recent=2, hourly=3, daily=2)  # type: ignore[attr-defined]
    hour, day = 3_600_000, 86_400_000
    moments = [0, day + hour, day + 5 * hour, 2 * day, 2 * day + hour, 2 * day + 2 * hour]
    moments += [2 * day + 2 * hour + 60_000, 2 * day + 2 * hour + 120_000]
    positions = [Position(10 * day + ms, 0) for ms in moments]
    expected = None
    for n, position in enumerate(positions):
        base = positions[3] if n >= 4 else None  # the later ones are deltas of the fourth
        assert snapshots.publish("default", b"s%d" % n, position, expected, base)
        expected = position
    # The newest two (6, 7); the last of each of the last 3 hours (4, 7; 3 is also the base of
    # the deltas 4 to 7); the last of each of the last 2 days (2, 7).
    assert snapshots.positions("default") == [positions[n] for n in (2, 3, 4, 6, 7)]
    assert [snapshots.load("default", positions[n]) for n in (0, 1, 5)] == [None] * 3
    assert snapshots.load("default", positions[3]) == b"s3"


def test_the_ladder_keeps_the_newest_snapshot_of_each_stride_of_events_however_fast_they_came(
    runtime: Runtime,
) -> None:
    snapshots = runtime.snapshots
    snapshots._rule = Ladder(recent=1, hourly=1, daily=0, stride=1000, strides=3)  # type: ignore[attr-defined]
    folded = [400, 900, 1200, 1900, 2500, 3100, 3600, 4100]  # all within one second
    positions = [Position(5_000 + n, 0) for n in range(len(folded))]
    expected = None
    for n, (position, count) in enumerate(zip(positions, folded, strict=True)):
        assert snapshots.publish("default", b"s%d" % n, position, expected, None, count)
        expected = position
    # The newest of strides 4 (4100), 3 (3600, not 3100), 2 (2500) and 1 (1900, not 1200)
    # that lie within 3,000 events of the newest: 900 is 3,200 back.
    assert snapshots.positions("default") == [positions[n] for n in (3, 4, 6, 7)]
    assert snapshots.folded("default", positions[6]) == 3600
    assert snapshots.folded("default", positions[2]) == 0  # dropped with its snapshot


def test_a_kept_small_delta_keeps_the_delta_it_is_of_and_that_ones_full_snapshot(
    runtime: Runtime,
) -> None:
    snapshots = runtime.snapshots
    snapshots._rule = Ladder(recent=1, hourly=0, daily=0)  # type: ignore[attr-defined]
    full, delta, small, smaller = (Position(n, 0) for n in (1, 2, 3, 4))
    assert snapshots.publish("default", b"full", full, None)
    assert snapshots.publish("default", b"delta", delta, full, full)
    assert snapshots.publish("default", b"small", small, delta, delta)
    assert snapshots.publish("default", b"smaller", smaller, small, delta)
    assert snapshots.positions("default") == [full, delta, smaller]
    assert snapshots.load("default", small) is None
    assert snapshots.load("default", full) == b"full"


def test_a_full_snapshot_is_published_with_the_digest_of_its_bytes_and_loses_it_with_them(
    runtime: Runtime,
) -> None:
    snapshots = runtime.snapshots
    snapshots._rule = Ladder(recent=1, hourly=0, daily=0)  # type: ignore[attr-defined]
    full, delta, newer = (Position(n, 0) for n in (1, 2, 3))
    assert snapshots.publish("default", b"full", full, None)
    assert snapshots.publish("default", b"delta", delta, full, full)
    assert snapshots.digest("default", full) == snapshot_digest(b"full")
    assert snapshots.digest("default", delta) is None  # a delta is checked by its base
    assert snapshots.publish("default", b"newer", newer, delta)  # full: the others go
    assert snapshots.digest("default", full) is None
    assert snapshots.digest("default", newer) == snapshot_digest(b"newer")
    snapshots.drop("default")
    assert snapshots.digest("default", newer) is None


def redis_runtime(redis_url: str, idempotency_ttl: int) -> Runtime:
    return Runtime.connect(Settings(redis_url=redis_url, idempotency_ttl=idempotency_ttl))


def test_redis_keeps_keys_in_buckets_at_least_the_ttl_at_most_twice_it_then_removes_them(
    redis_url: str,
) -> None:
    runtime = redis_runtime(redis_url, idempotency_ttl=1)
    client = redis.Redis.from_url(redis_url)
    try:
        # Just after a second begins (the clock of the redis-server this test started),
        # so that the keys are written in the generation of that second
        began = math.floor(time.time()) + 1
        _sleep_until(began + 0.02)
        [first] = runtime.log.append("default", [note(["a"], key="k1")])
        runtime.log.append("default", [note([str(n)], key=f"other-{n}") for n in range(300)])
        names = client.keys("*")
        assert not [n for n in names if b":idem:" in n]  # no key of its own per event
        assert 0 < len([n for n in names if b":seen:" in n]) <= 301
        _sleep_until(began + 1.2)  # the next generation: still known
        [again] = runtime.log.append("default", [note(["a"], key="k1")])
        assert again.is_duplicate and again.position == first.position
        _sleep_until(began + 2.2)  # the one after: forgotten
        [later] = runtime.log.append("default", [note(["a"], key="k1")])
        assert not later.is_duplicate
        assert client.keys(f"*:seen:*:{began}") == []  # expired: no lookup reads them now
        assert client.keys(f"*:seen:*:{began + 2}")  # the newest stay
        assert 0 < client.ttl(client.keys(f"*:seen:*:{began + 2}")[0]) <= 2
    finally:
        runtime.close()
        client.close()


def test_redis_honours_a_key_an_earlier_version_kept_as_a_string(redis_url: str) -> None:
    runtime = redis_runtime(redis_url, idempotency_ttl=3600)
    client = redis.Redis.from_url(redis_url)
    try:
        # The log and key as an earlier version left them (no bucket yet)
        first = runtime.log.append_raw("default", encode_event(note(["a"])))
        event = note(["a"], key="old-key")
        client.set(idempotency_key("default", "old-key"), f"{first} -", ex=3600)
        [again] = runtime.log.append("default", [event])
        assert again.is_duplicate and again.position == first
        with pytest.raises(KeyConflict):
            client.set(idempotency_key("default", "old-key"), f"{first} other")
            runtime.log.append("default", [event])
    finally:
        runtime.close()
        client.close()


def _sleep_until(moment: float) -> None:
    time.sleep(max(0.0, moment - time.time()))
