"""The operator key of a local pipeline: made by `assocmem up` on first start, kept in its
data directory (mode 600), where the CLI finds it."""

from __future__ import annotations

from pathlib import Path

from assocmem.api.client.local import read_key_file
from assocmem.api.ops.run_file import write_key_file
from assocmem.workers.runtime.settings import Settings
from assocmem.workers.store.redis.api_keys import RedisKeyStore, digest
from assocmem.workers.store.redis.connect import data_client


def ensure_operator_key(settings: Settings, home: Path) -> bool:
    """Make the operator key unless the data directory holds one Redis knows; whether one
    was made."""
    assert settings.redis_url, "`up` gives its Redis"
    known = read_key_file(home)
    with data_client(settings.redis_url) as client:
        if known is not None and RedisKeyStore(client).find(digest(known)) is not None:
            return False
    # The key commands bring the runtime and the engine (a quarter of a second, beside the
    # starting API): a start that finds its key skips them
    from assocmem.workers.app.key_commands import KeyCommands
    from assocmem.workers.runtime.services import Runtime

    runtime = Runtime.connect(settings)
    try:
        write_key_file(home, KeyCommands(runtime).bootstrap(settings.tenant))
        return True
    finally:
        runtime.close()
