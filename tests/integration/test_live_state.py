"""The state an API process serves: folded as entries arrive; a read waits only for what it names."""

from __future__ import annotations

import dataclasses
import threading
import time

import pytest

from assocmem.engine.position import ZERO, Position
from assocmem.engine.snapshot.codec import content_hash
from assocmem.engine.state.state import State
from assocmem.workers.errors import PositionAhead
from assocmem.workers.jobs.fold_job import fold_and_publish
from assocmem.workers.runtime.redis_server import free_port
from assocmem.workers.runtime.services import Runtime
from assocmem.workers.runtime.settings import Settings
from assocmem.workers.state import live as live_state
from assocmem.workers.state.live import LiveState
from assocmem.workers.state.preload import StatePreload
from assocmem.workers.state.rebuild import Rebuild, rebuild
from tests.stores import note, write


def live(runtime: Runtime) -> LiveState:
    return LiveState(runtime.log, runtime.snapshots, "default")


def test_a_read_after_a_position_sees_a_write_made_elsewhere(runtime: Runtime) -> None:
    state = live(runtime)
    with state.served() as served:
        assert len(served.memories) == 0
    [position] = write(runtime, ["timeout", "backoff"])  # another process's append
    with state.served(after=position) as served:
        assert served.position == position and len(served.memories) == 1


def test_a_read_without_after_answers_without_going_to_redis(runtime: Runtime) -> None:
    state = live(runtime)
    write(runtime, ["a", "b"])
    with state.served() as served:
        assert len(served.memories) == 1
    write(runtime, ["c", "d"])
    with state.served() as served:  # nothing folded it yet: the read did not look at the log
        assert len(served.memories) == 1


def test_an_append_through_this_process_is_waited_for_without_after(runtime: Runtime) -> None:
    state = live(runtime)
    with state.served():
        pass
    [position] = write(runtime, ["a", "b"])
    state.note_appended(position)
    with state.served() as served:
        assert served.position == position


def test_events_appended_here_are_folded_without_reading_them_back(runtime: Runtime) -> None:
    state = live(runtime)
    with state.served():
        pass
    events = [note(["a", "b"]), note(["b", "c"])]
    appended = runtime.log.append("default", events)
    state.fold_appended(events, appended)
    state.note_appended(appended[-1].position)
    runtime.log.entries = None  # type: ignore[assignment,method-assign]  # no read from here on
    with state.served() as served:
        assert len(served.memories) == 2
        assert served.position == runtime.log.last_position("default")


def test_events_that_do_not_follow_the_state_are_left_to_the_background_fold(
    runtime: Runtime,
) -> None:
    state = live(runtime)
    with state.served():
        pass
    write(runtime, ["x", "y"])  # another process's append, not folded here yet
    events = [note(["a", "b"])]
    appended = runtime.log.append("default", events)
    state.fold_appended(events, appended)
    with state.served() as served:  # nothing skipped: both, in log order
        assert served.position == ZERO and len(served.memories) == 0
    state.note_appended(appended[0].position)
    with state.served() as served:
        assert [m.text for m in served.rows] == ["x y", "a b"]
    assert content_hash(served) == content_hash(
        rebuild(runtime.log, runtime.snapshots, "default", Rebuild(from_zero=True))
    )


def test_the_background_fold_picks_up_new_entries_as_they_arrive(runtime: Runtime) -> None:
    state = live(runtime)
    stop = threading.Event()
    folding = threading.Thread(target=state.keep_fresh, args=(stop,), kwargs={"wait": 0.2})
    folding.start()
    try:
        [position] = write(runtime, ["a", "b"])
        deadline = time.monotonic() + 30
        while state.served_position != position:
            assert time.monotonic() < deadline, "the background fold never folded the entry"
            time.sleep(0.01)
    finally:
        stop.set()
        folding.join(10)
    assert not folding.is_alive(), "keep_fresh did not stop"


def test_after_past_the_end_of_the_log_is_refused(runtime: Runtime) -> None:
    [position] = write(runtime, ["a", "b"])
    with pytest.raises(PositionAhead, match="past the end of the log"):
        with live(runtime).served(after=Position(position.ms + 1, 0)):
            pass


def test_a_state_preloaded_while_the_api_imports_is_served_and_folded_on(
    runtime: Runtime, settings: Settings
) -> None:
    write(runtime, ["a", "b"], ["b", "c"])
    assert fold_and_publish(runtime, "default", force=True)["published"]
    write(runtime, ["c", "d"])  # after the snapshot: the live state folds it
    preload = StatePreload(settings)
    taken = []

    def preloaded() -> tuple[int, State] | None:
        taken.append(loaded := preload.take())
        return loaded

    state = LiveState(runtime.log, runtime.snapshots, "default", preloaded)
    with state.served() as served:
        assert len(served.memories) == 3
    assert len(taken) == 1 and taken[0] is not None and taken[0][1] is served
    assert content_hash(served) == content_hash(
        rebuild(runtime.log, runtime.snapshots, "default", Rebuild(from_zero=True))
    )


def test_a_preload_that_cannot_reach_redis_leaves_the_load_to_the_live_state(
    runtime: Runtime, settings: Settings
) -> None:
    write(runtime, ["a", "b"])
    unreachable = dataclasses.replace(settings, redis_url=f"redis://127.0.0.1:{free_port()}/0")
    preload = StatePreload(unreachable)
    assert preload.take() is None
    state = LiveState(runtime.log, runtime.snapshots, "default", StatePreload(unreachable).take)
    with state.served() as served:
        assert len(served.memories) == 1


def test_a_state_is_caught_up_only_once_the_events_after_its_snapshot_are_folded(
    runtime: Runtime, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(runtime, ["a", "b"])
    assert fold_and_publish(runtime, "default", force=True)["published"]
    write(runtime, ["c", "d"])  # the tail after the snapshot
    state = live(runtime)
    seen_while_folding = []
    fold_tail = live_state.fold_entries

    def observed(*args: object, **kwargs: object) -> object:
        seen_while_folding.append((state.served_position is not None, state.caught_up))
        return fold_tail(*args, **kwargs)

    monkeypatch.setattr(live_state, "fold_entries", observed)
    assert not state.caught_up
    state.refresh()
    assert seen_while_folding == [(True, False)]  # loaded, not yet caught up
    assert state.caught_up and state.served_position == runtime.log.last_position("default")
