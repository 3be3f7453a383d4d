"""Ctrl-C while the CLI follows a job stops the following, says the job goes on, and exits
130 (a shell's code for SIGINT), with no traceback."""

from __future__ import annotations

import pytest

from assocmem.api.cli.follow import follow


class Interrupted:
    """What the CLI's client does when Ctrl-C lands while it waits for the job's state."""

    def job(self, job_id: str) -> dict:
        raise KeyboardInterrupt


def test_ctrl_c_stops_following_and_names_the_job_that_goes_on(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit) as stopped:
        follow(Interrupted(), {"id": "replay-default-1", "state": "started"}, "replaying", False)  # type: ignore[arg-type]
    assert stopped.value.code == 130
    said = capsys.readouterr().err
    assert "stopped following job replay-default-1; it goes on on a worker" in said
