"""Whether this Python could have built the engine's C extensions: setup.py builds them as
optional, so a failed build would go by unseen but for a test that asks."""

from __future__ import annotations

import shutil
import sysconfig
from pathlib import Path

import pytest


def skip_unless_c_can_be_built() -> None:
    headers = Path(sysconfig.get_paths()["include"]) / "Python.h"
    if not (shutil.which(sysconfig.get_config_var("CC").split()[0]) and headers.exists()):
        pytest.skip("no C compiler or no Python headers here")
