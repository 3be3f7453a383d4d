"""Every repository path that the docs, docstrings and comments name exists: a module
moved or renamed without its mentions fails here, not in a reader's hands."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[3]
NAMED = re.compile(r"(?<![\w./-])((?:engine|workers|api|tests|bench|deploy|docs)/[\w/.-]*\w)")
TEXTS = (".py", ".md", ".toml", ".yaml", ".c", ".lua", ".service")


def tracked_texts() -> list[Path]:
    try:
        listed = subprocess.run(
            ["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True
        ).stdout.split()
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout: the tracked files are unknown")
    return [ROOT / name for name in listed if name.endswith(TEXTS) or name == "Makefile"]


def test_every_named_repository_path_exists() -> None:
    missing = [
        f"{path.relative_to(ROOT)}:{number}: {named}"
        for path in tracked_texts()
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        for named in NAMED.findall(line)
        if not (ROOT / named.rstrip(".")).exists()
    ]
    assert missing == []
