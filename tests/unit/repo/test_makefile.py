"""`make run` on a fresh clone says what it is doing before the minutes pip takes."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[3]


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
def test_the_first_install_says_it_is_installing_before_pip_runs() -> None:
    planned = subprocess.run(
        ["make", "-n", "-B", ".venv/.installed"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    said = next(n for n, line in enumerate(planned) if "installing assocmem" in line)
    pip = next(n for n, line in enumerate(planned) if "pip install" in line)
    assert said < pip
    done = next(n for n, line in enumerate(planned) if "installed: .venv/bin/assocmem" in line)
    assert pip < done
