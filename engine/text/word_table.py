"""A read-only word -> number table at 16 bytes a word.

Word rarity comes from tables of hundreds of thousands of words. As dicts of str they cost
tens of MB in every process that extracts concepts (each API replica); here a word is
kept only as its 64-bit hash, sorted, beside its value. A word outside the table
whose hash equals one inside it would read that word's value: odds of about 1 in
10^13 per lookup, and the cost would be one slightly wrong term weight. Python salts
hashes per process, so a table is built in the process that reads it, never stored
or sent.

Words are hashed as UTF-8 bytes: CPython hashes a str's internal buffer, so "kp"
(one byte a character) and "火" (two) hash alike.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

_ENTRY = np.dtype([("hash", np.int64), ("value", np.float64)])


class WordTable:
    def __init__(self, words: Sequence[str], values: Sequence[float] | np.ndarray) -> None:
        """Each word's value; a word given twice keeps its last value, as a dict would.
        Built from two columns, not a pair a word: a table of 300,000 words is a few
        hundredths of a second to build, which every process that extracts pays at start."""
        if len(words) != len(values):
            raise ValueError(f"{len(words)} words but {len(values)} values")
        table = np.empty(len(words), dtype=_ENTRY)
        table["hash"] = np.fromiter(map(_hash, words), dtype=np.int64, count=len(words))
        table["value"] = values
        table = table[np.argsort(table["hash"], kind="stable")]
        last_of_its_hash = np.ones(len(table), dtype=bool)
        last_of_its_hash[:-1] = table["hash"][1:] != table["hash"][:-1]
        table = table[last_of_its_hash]
        self._hashes = np.ascontiguousarray(table["hash"])
        self._values = np.ascontiguousarray(table["value"])

    def __len__(self) -> int:
        return len(self._hashes)

    def get(self, word: str, default: float) -> float:
        h = _hash(word)
        i = int(np.searchsorted(self._hashes, h))
        if i < len(self._hashes) and self._hashes[i] == h:
            return float(self._values[i])
        return default

    def get_many(self, words: Sequence[str], default: float) -> np.ndarray:
        """`get` of each word, in one search: a lookup alone costs microseconds in numpy,
        even for no word at all (half the calls extraction makes: its Chinese words of
        English text)."""
        if not len(words):
            return np.empty(0)
        if not len(self._hashes):
            return np.full(len(words), default)
        hashes = np.fromiter(map(_hash, words), dtype=np.int64, count=len(words))
        at = np.minimum(np.searchsorted(self._hashes, hashes), len(self._hashes) - 1)
        return np.where(self._hashes[at] == hashes, self._values[at], default)

    def values(self) -> np.ndarray:
        return self._values


def _hash(word: str) -> int:
    return hash(word.encode("utf-8", "surrogatepass"))
