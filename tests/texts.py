"""Real text for tests (tests/data/README.md says where it comes from)."""

from __future__ import annotations

import json
from pathlib import Path

SAMPLE = Path(__file__).parent / "data" / "texts_sample.jsonl"


def sample_texts() -> list[str]:
    """200 commit messages of the git project, then 20 Chinese paragraphs."""
    with SAMPLE.open(encoding="utf-8") as lines:
        return [json.loads(line)["text"] for line in lines]
