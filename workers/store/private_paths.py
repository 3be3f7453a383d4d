"""Directories that hold what users wrote are their owner's only."""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path


def private_directory(path: Path) -> Path:
    """`path`, made if missing, that only its owner may list or read (mode 700), also when
    it was made before with the umask's mode: Redis writes its AOF, every memory's text, with
    mode 644, so the directory is what keeps other users out."""
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    path.chmod(0o700)
    return path


def write_private(path: Path, pieces: Iterable[bytes | memoryview]) -> None:
    """`pieces` as the file `path`, its owner's only (mode 600), whole or not at all: a
    temporary file renamed over it."""
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with open(os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "wb") as file:
            for piece in pieces:
                file.write(piece)
        temporary.replace(path)
    finally:
        temporary.unlink(missing_ok=True)
