"""Directories that hold what users wrote are their owner's only."""

from __future__ import annotations

from pathlib import Path


def private_directory(path: Path) -> Path:
    """`path`, made if missing, that only its owner may list or read (mode 700), also when
    it was made before with the umask's mode: Redis writes its AOF, every memory's text, with
    mode 644, so the directory is what keeps other users out."""
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    path.chmod(0o700)
    return path
