"""Text and CSV files cut into pieces small enough for one request, each with a stable key."""

from __future__ import annotations

import csv
import dataclasses
import hashlib
from collections.abc import Iterator
from pathlib import Path

from assocmem.api.errors import BadRequest

PIECE_CHARACTERS = 90_000
"""Characters sent per request: under the API's 100,000-character limit on one text."""


@dataclasses.dataclass(frozen=True, slots=True)
class Piece:
    path: Path
    title: str
    text: str
    size: int
    """Bytes of the file this piece stands for (for the progress bar)."""

    @property
    def key(self) -> str:
        digest = hashlib.sha256(f"{self.path.name}\0{self.text}".encode()).hexdigest()
        return f"ingest:{digest[:40]}"


def pieces(paths: tuple[Path, ...], column: str) -> Iterator[Piece]:
    for path in paths:
        if path.suffix.lower() == ".csv":
            yield from _csv_pieces(path, column)
        else:
            yield from _text_pieces(path)


def _text_pieces(path: Path) -> Iterator[Piece]:
    text = path.read_text(encoding="utf-8", errors="replace")
    size = path.stat().st_size
    chunks = list(_chunks(text.split("\n\n")))
    for n, chunk in enumerate(chunks):
        yield Piece(path, _title(path, n, len(chunks)), chunk, size // max(1, len(chunks)))


def _csv_pieces(path: Path, column: str) -> Iterator[Piece]:
    with path.open(newline="", encoding="utf-8", errors="replace") as handle:
        reader = csv.DictReader(handle)
        if reader.fieldnames is None or column not in reader.fieldnames:
            raise BadRequest(
                f"{path} has no column {column!r}: expected one of {reader.fieldnames or []} "
                "(choose it with --column)"
            )
        rows = [row[column].strip() for row in reader if (row.get(column) or "").strip()]
    size = path.stat().st_size
    chunks = list(_chunks(rows))
    for n, chunk in enumerate(chunks):
        yield Piece(path, _title(path, n, len(chunks)), chunk, size // max(1, len(chunks)))


def _chunks(parts: list[str]) -> Iterator[str]:
    """Paragraphs (or rows) joined by blank lines, at most PIECE_CHARACTERS each."""
    buffer: list[str] = []
    length = 0
    for part in parts:
        while len(part) > PIECE_CHARACTERS:
            yield part[:PIECE_CHARACTERS]
            part = part[PIECE_CHARACTERS:]
        if length + len(part) > PIECE_CHARACTERS and buffer:
            yield "\n\n".join(buffer)
            buffer, length = [], 0
        buffer.append(part)
        length += len(part) + 2
    if buffer and any(p.strip() for p in buffer):
        yield "\n\n".join(buffer)


def _title(path: Path, n: int, total: int) -> str:
    name = path.name[:80]
    return name if total == 1 else f"{name} ({n + 1}/{total})"
