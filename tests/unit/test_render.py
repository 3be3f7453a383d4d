"""What the CLI prints for answers that may be long."""

from __future__ import annotations

from assocmem.api import render


def test_a_resend_of_many_dead_letters_counts_them_and_lists_the_first_of_each_outcome() -> None:
    unreadable = [
        {"position": f"{n}-0", "appended": None, "reason": "not JSON"} for n in range(1, 26)
    ]
    appended = [{"position": "30-0", "appended": "40-0", "reason": None}]
    lines = render.resent({"resent": unreadable + appended}).splitlines()
    assert lines[0] == "1 appended again, 25 left unreadable"
    assert lines[1] == "30-0  appended again at 40-0"
    assert lines[2:22] == [f"{n}-0  still unreadable: not JSON" for n in range(1, 21)]
    assert lines[22:] == ["... and 5 more still unreadable (--json)"]
    assert render.resent({"resent": []}) == "no dead letters"
