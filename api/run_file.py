"""The run file of `assocmem up`: where a running pipeline serves, and the PIDs of its processes."""

from __future__ import annotations

import contextlib
import dataclasses
import os
from pathlib import Path

import orjson

from assocmem.workers.redis_server import is_alive

RUN_FILE = "run.json"
DEFAULT_URL = "http://127.0.0.1:8765"


@dataclasses.dataclass
class RunInfo:
    url: str
    up_pid: int
    api_pid: int
    worker_pids: list[int]
    redis_pid: int | None
    redis_url: str


def write_run_file(home: Path, info: RunInfo) -> None:
    path = home / RUN_FILE
    tmp = path.with_suffix(".tmp")
    tmp.write_bytes(orjson.dumps(dataclasses.asdict(info), option=orjson.OPT_INDENT_2))
    os.replace(tmp, path)


def read_run_file(home: Path) -> RunInfo | None:
    try:
        return RunInfo(**orjson.loads((home / RUN_FILE).read_bytes()))
    except (OSError, ValueError, TypeError):
        return None


def remove_run_file(home: Path) -> None:
    with contextlib.suppress(FileNotFoundError):
        (home / RUN_FILE).unlink()


def running_pipeline(home: Path) -> RunInfo | None:
    """The run file's pipeline if its `up` process is still alive."""
    info = read_run_file(home)
    return info if info and is_alive(info.up_pid) else None


def service_url(explicit: str | None, home: Path) -> str:
    """--url, else ASSOCMEM_URL (passed in as explicit by click), else the local `up`'s, else the default."""
    if explicit:
        return explicit
    info = read_run_file(home)
    return info.url if info else DEFAULT_URL
