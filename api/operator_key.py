"""The operator key of a local pipeline: made by `assocmem up` on first start, kept in its
data directory (mode 600), where the CLI finds it."""

from __future__ import annotations

from pathlib import Path

from assocmem.workers.key_commands import KeyCommands
from assocmem.workers.runtime import Runtime
from assocmem.workers.settings import Settings

from .run_file import read_key_file, write_key_file


def ensure_operator_key(settings: Settings, home: Path) -> bool:
    """Make the operator key unless the data directory holds one Redis knows; whether one
    was made."""
    runtime = Runtime.connect(settings)
    try:
        keys = KeyCommands(runtime)
        known = read_key_file(home)
        if known is not None and keys.authenticate(known) is not None:
            return False
        write_key_file(home, keys.bootstrap(settings.tenant))
        return True
    finally:
        runtime.close()
