"""The run file of `assocmem up` (where a running pipeline serves, the PIDs of its processes,
the Redis URL with its password: readable by its owner only) and the lock on its data
directory."""

from __future__ import annotations

import contextlib
import dataclasses
import fcntl
import os
from pathlib import Path

import orjson

from assocmem.api.client.local import KEY_FILE, RUN_FILE

LOCK_FILE = "lock"


@dataclasses.dataclass
class RunInfo:
    url: str
    up_pid: int
    api_pid: int
    worker_pids: list[int]
    redis_pid: int | None
    redis_url: str
    cron_pid: int | None = None
    cluster_pids: list[int] = dataclasses.field(default_factory=list)
    """The nodes of `up --cluster`'s local Redis Cluster."""
    queue_url: str | None = None
    """RQ's Redis, where it is not the data's (`up --cluster`: the embedded one)."""


def write_run_file(home: Path, info: RunInfo) -> None:
    path = home / RUN_FILE
    tmp = path.with_suffix(".tmp")
    descriptor = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "wb") as file:
        file.write(orjson.dumps(dataclasses.asdict(info), option=orjson.OPT_INDENT_2))
    os.replace(tmp, path)


def lock_home(home: Path) -> int | None:
    """Lock `home` for this pipeline; the descriptor holding the lock, or None if another
    pipeline holds it. Children handed the descriptor keep the lock until they have all
    exited too: a second `up` cannot start a second Redis on the same files meanwhile."""
    descriptor = os.open(home / LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(descriptor)
        return None
    return descriptor


def read_run_file(home: Path) -> RunInfo | None:
    try:
        return RunInfo(**orjson.loads((home / RUN_FILE).read_bytes()))
    except (OSError, ValueError, TypeError):
        return None


def remove_run_file(home: Path) -> None:
    with contextlib.suppress(FileNotFoundError):
        (home / RUN_FILE).unlink()


def write_key_file(home: Path, secret: str) -> None:
    path = home / KEY_FILE
    tmp = path.with_suffix(".tmp")
    descriptor = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "w") as file:
        file.write(secret + "\n")
    os.replace(tmp, path)
