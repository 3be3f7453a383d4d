"""replay --verify on both stores: on Redis the served state's hash comes from a child
process; either way a match is a match and a snapshot that differs from the log is caught."""

from __future__ import annotations

import dataclasses
import logging
import time
from collections.abc import Iterator

import pytest

from assocmem.engine.events.envelope import encode_event
from assocmem.engine.events.fold import Rejection, fold
from assocmem.engine.position import ZERO, Position
from assocmem.engine.principal import Principal
from assocmem.engine.snapshot.codec import content_hash, dump_state
from assocmem.engine.state.state import State
from assocmem.workers.app.history import History, _middle
from assocmem.workers.jobs.fold_job import fold_and_publish
from assocmem.workers.runtime.services import Runtime
from assocmem.workers.runtime.settings import Settings
from assocmem.workers.state import replay_children
from assocmem.workers.state.log_events import counted_snapshots
from assocmem.workers.state.rebuild import Rebuild, decode_entries, log_share, rebuild
from assocmem.workers.state.replay_children import ServedHash, served_hash
from assocmem.workers.state.replay_progress import ReplayProgress
from assocmem.workers.store.ports import iter_entries
from tests.stores import KINDS, Clock, make_runtime, note, write

OPERATOR = Principal("default", "auditor")


@pytest.fixture(params=KINDS)
def runtime(request: pytest.FixtureRequest) -> Iterator[Runtime]:
    yield from make_runtime(request, request.param, Clock())


def test_a_replay_of_a_log_folded_and_snapshotted_matches(
    runtime: Runtime, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger=replay_children.__name__)
    write(runtime, ["timeout", "jitter"], ["timeout", "retry"])
    fold_and_publish(runtime, "default", force=True)
    last = write(runtime, ["jitter", "backoff"])[-1]  # a tail after the snapshot
    found = History(runtime).verify(OPERATOR, None)
    assert found.matches and found.difference is None
    assert found.position == last
    replayed = rebuild(runtime.log, runtime.snapshots, "default", Rebuild(from_zero=True))
    assert found.replayed == found.served == content_hash(replayed)
    halved = "the second half of the replay: worked out in a child process" in caplog.text
    assert halved == (runtime.queue_connection is not None)  # on Redis, from the snapshot


def test_a_snapshot_kept_midway_that_is_not_the_log_folded_is_caught_past_it(
    runtime: Runtime,
) -> None:
    """The second half folds on from the snapshot kept midway: were it taken as it is, the
    served state (that snapshot and the tail) would match it."""
    _publish_wrong(runtime)
    end = write(runtime, ["jitter", "backoff"])[-1]
    found = History(runtime).verify(OPERATOR, None)
    assert not found.matches and found.position == end
    replayed = rebuild(runtime.log, runtime.snapshots, "default", Rebuild(from_zero=True))
    assert found.replayed == content_hash(replayed)
    assert found.difference is not None and "retry" in found.difference


def test_a_snapshot_that_is_not_the_log_folded_is_caught_with_its_first_link(
    runtime: Runtime,
) -> None:
    wrong = _publish_wrong(runtime)
    found = History(runtime).verify(OPERATOR, None)
    assert not found.matches
    assert found.served == content_hash(wrong)
    assert found.difference is not None and "retry" in found.difference


def test_the_second_half_starts_at_the_snapshot_midway_in_events_not_in_time(
    settings: Settings,
) -> None:
    """Eight notes in a burst, then one a second later: half-way in time is the end of the
    burst, half-way in events its middle."""
    runtime = Runtime.connect(settings)
    burst = _burst(runtime, 8, kept=(3, 8))
    assert runtime.snapshots.starts("default") == [burst[2], burst[7]]
    time.sleep(1.0)
    last = write(runtime, ["timeout", "later"])[-1]
    counts = counted_snapshots(runtime.log, runtime.snapshots, "default", last)[1]
    assert _middle(counts, last) == burst[2]
    assert History(runtime).verify(OPERATOR, None).matches
    runtime.close()


def test_a_replay_shows_its_progress_in_events_and_in_halves_the_work_of_both(
    runtime: Runtime,
) -> None:
    """Eight notes in a burst, snapshots kept after the 4th and the 8th, then one note a
    second later: by time the burst would be a hundredth of the replay."""
    burst = _burst(runtime, 8, kept=(4, 8))
    time.sleep(1.0)
    last = write(runtime, ["timeout", "later"])[-1]
    second = _Second()
    shares: list[float] = []
    counted = counted_snapshots(runtime.log, runtime.snapshots, "default", last)
    shown = ReplayProgress(runtime.log, "default", last, counted, shares.append)
    shown.first_at(burst[3])
    assert shares[-1] == pytest.approx(4 / 9)
    shown.halves(burst[3], second)  # a second half from the 4th note
    shown.report()
    assert shares[-1] == pytest.approx(4 / 9)  # it has yet to begin
    second.at = burst[7].ms
    shown.report()
    assert shares[-1] == pytest.approx(8 / 9)
    second.at = last.ms
    shown.report()
    assert shares[-1] == 1.0


def test_a_replay_on_redis_reports_progress_past_its_first_half_to_the_end(
    settings: Settings, caplog: pytest.LogCaptureFixture
) -> None:
    runtime = Runtime.connect(settings)
    for n in range(8):
        write(runtime, ["timeout", f"c{n}"])
        if n in (3, 7):
            fold_and_publish(runtime, "default", force=True)
    write(runtime, ["timeout", "later"])
    caplog.set_level(logging.INFO, logger=History.__module__)
    shares: list[float] = []
    seen: list[int] = []  # how many shares were reported when the first half ended

    def report(share: float) -> None:
        if "the first half of the replay" in caplog.text and not seen:
            seen.append(len(shares))
        shares.append(share)

    assert History(runtime).verify(OPERATOR, None, report).matches
    assert seen and shares[seen[0] :], "nothing reported while the second half folded"
    assert shares == sorted(shares) and shares[-1] == 1.0
    runtime.close()


def test_audits_and_rebuilds_report_their_progress_in_events_too(runtime: Runtime) -> None:
    """`log_share`, through which an audit and a rebuild waited for report: the same burst
    and note a second later; from the 4th note on, a rebuild's share of the 5 left."""
    burst = _burst(runtime, 8, kept=(4, 8))
    time.sleep(1.0)
    last = write(runtime, ["timeout", "later"])[-1]
    shares: list[float] = []
    whole = log_share(runtime.log, runtime.snapshots, "default", None, shares.append)
    whole(burst[3])
    whole(burst[7])
    assert shares == pytest.approx([4 / 9, 8 / 9])
    rest = log_share(runtime.log, runtime.snapshots, "default", last, shares.append, burst[3])
    rest(burst[7])
    rest(last)
    assert shares[2:] == pytest.approx([4 / 5, 1.0])


@dataclasses.dataclass
class _Second:
    """A second half whose fold is where a test says."""

    at: int = 0

    def reached(self) -> int:
        return self.at


def test_the_child_hashes_the_served_state_and_a_failed_child_answers_none(
    settings: Settings,
) -> None:
    runtime = Runtime.connect(settings)  # a child reads the same Redis
    write(runtime, ["timeout", "jitter"])
    fold_and_publish(runtime, "default", force=True)
    last = write(runtime, ["timeout", "retry"])[-1]
    served = rebuild(runtime.log, runtime.snapshots, "default", Rebuild(last))
    assert served_hash(runtime.settings, "default", str(last))[0] == content_hash(served)
    child = ServedHash(runtime.settings, "default", last)
    assert child.result() == content_hash(served)
    child.close()
    nowhere = dataclasses.replace(runtime.settings, redis_url="redis://127.0.0.1:1/0")
    failed = ServedHash(nowhere, "default", last)
    assert failed.result() is None
    failed.close()
    runtime.close()


def test_dead_letters_this_version_reads_are_appended_again_once_and_the_others_said_why(
    runtime: Runtime,
) -> None:
    readable = [
        runtime.log.append_raw("default", encode_event(note([f"c{n}", "d"]))) for n in range(3)
    ]
    broken = runtime.log.append_raw("default", b"{broken")
    # As an older version rejected them: an event type it did not know, say
    rejected = [Rejection(p, "unknown event type") for p in readable] + [Rejection(broken, "bad")]
    runtime.log.add_dead_letters("default", rejected)
    history = History(runtime)
    first = history.resend(OPERATOR)
    assert [r.position for r in first] == [*readable, broken]
    assert all(r.appended is not None and r.reason is None for r in first[:3])
    assert first[3].appended is None and first[3].reason is not None
    assert "not JSON" in first[3].reason
    appended = [r.appended for r in first[:3]]
    assert appended == sorted(appended) and appended[0] > broken  # in their order, at the end
    again = history.resend(OPERATOR)
    assert [r.appended for r in again[:3]] == appended  # each appended once
    texts = [e.data["text"] for e in decode_entries(runtime.log.entries("default", broken))[0]]
    assert texts == ["c0 d", "c1 d", "c2 d"]


def _publish_wrong(runtime: Runtime) -> State:
    """Two notes, and a snapshot of them published with a link no event taught; returned."""
    last = write(runtime, ["timeout", "jitter"], ["timeout", "retry"])[-1]
    entries = [e for chunk in iter_entries(runtime.log, "default", ZERO) for e in chunk]
    wrong = State()
    fold(wrong, decode_entries(entries)[0])
    wrong.set_learned(wrong.concept_index["timeout"], wrong.concept_index["retry"], 2.0, last)
    runtime.snapshots.publish("default", dump_state(wrong), last, None, folded=2)
    return wrong


def _burst(runtime: Runtime, notes: int, kept: tuple[int, ...]) -> list[Position]:
    """`notes` notes, each in its own millisecond, with a snapshot published after the
    n-th for each n of `kept` (with its count of events folded); their positions."""
    burst: list[Position] = []
    latest = None
    for n in range(1, notes + 1):
        burst += write(runtime, ["timeout", f"c{n}"])
        time.sleep(0.005)
        if n in kept:
            state = rebuild(runtime.log, runtime.snapshots, "default", Rebuild(burst[-1]))
            assert runtime.snapshots.publish(
                "default", dump_state(state), burst[-1], latest, folded=n
            )
            latest = burst[-1]
    return burst
