"""`up` restarts a child that was killed, or that ran a while, at once; one that keeps
exiting by itself right after its start, after a delay that doubles up to 30 s."""

from __future__ import annotations

import signal

from assocmem.api.ops.supervisor import QUICK_EXIT, RESTART_DELAY_MAX, restart_delay


def test_a_child_that_keeps_failing_to_start_waits_longer_each_time_up_to_the_cap() -> None:
    quick_exits, delays = 0, []
    for _ in range(8):
        delay, quick_exits = restart_delay(1, 0.4, quick_exits)
        delays.append(delay)
    assert delays == [1.0, 2.0, 4.0, 8.0, 16.0, RESTART_DELAY_MAX, RESTART_DELAY_MAX, 30.0]


def test_a_killed_child_or_one_that_ran_a_while_is_restarted_at_once_and_forgiven() -> None:
    assert restart_delay(-signal.SIGKILL, 0.4, 5) == (0.0, 0)
    assert restart_delay(1, QUICK_EXIT + 0.1, 5) == (0.0, 0)
    assert restart_delay(0, 0.4, 0) == (1.0, 1)  # even a clean exit, if it comes at once
