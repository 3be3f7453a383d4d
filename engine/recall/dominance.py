"""Links never cost recall: link or chain evidence for a query concept a memory does not
carry never lifts it past a memory that carries clearly more of the question's weight.

"Clearly more" is decided by the two memories' own coverage of the question, not by a
constant: a memory keeps its place above one whose links stand in for what it lacks when
it carries most of what that one lacks (more than half). So what links add to a memory's
score is capped just below the direct score of the next memory above it that carries
clearly more. A memory that carries the whole question is never passed by one that
carries a part of it; a pure association (carrying none of the question) enters only
below every memory that carries more than half of it; memories that each carry a part
(a paraphrase, a long question whose words spread over many notes) are near-ties that
links reorder, and there links find what words alone miss.

A link feedback taught (or strengthened) is evidence about the memories one rating named,
for the question it rated: a memory that carries none of the question and is found through
such a link enters below every memory that carries some of it. Else one rating makes its
memory the answer to every later question on the same subject (the questions of one
conversation, of one paragraph), ahead of the memory that answers it (bench/cmrc.py
--feedback).
"""

from __future__ import annotations

import numpy as np

MARGIN = 1e-7
"""How far below the memory it may not pass a lifted memory stays (scores are compared
rounded to 1e-9)."""


def protected_above(cover: float) -> float:
    """The coverage a memory needs to keep its place above one that carries `cover` of the
    question and whose links stand in for the rest: more than half of what that one lacks."""
    return cover + (1.0 - cover) / 2


def bounded(
    full: np.ndarray,
    direct: np.ndarray,
    cover: np.ndarray,
    taught: np.ndarray | None = None,
    floor: float = -np.inf,
) -> np.ndarray:
    """`full` scores, each capped so that what it holds beyond its `direct` score never takes
    it past a memory that carries clearly more of the question (`cover`, per memory: the
    share of the question's weight it carries) and whose direct score is at least its own;
    one that carries none of it and that a taught link found (`taught`, per memory), past
    any memory that carries some. Scores below `floor`, which can reach no place a read
    returns, are left as they are."""
    linked = np.flatnonzero((full > direct) & (full >= floor))
    if not len(linked):
        return full
    levels = np.round(cover, 9)
    strict = np.zeros(len(full), dtype=bool) if taught is None else taught & (levels == 0)
    lifted_strict = strict[linked]
    # (level, found only through a taught link) -> the coverage a memory above it needs
    bars = {
        (level, False): protected_above(level)
        for level in np.unique(levels[linked][~lifted_strict]).tolist()
    }
    if lifted_strict.any():
        bars[0.0, True] = 0.0
    pool = np.flatnonzero(levels > min(bars.values()))
    order = pool[np.argsort(direct[pool])]
    ascending, ascending_levels = direct[order], levels[order]
    out = full.copy()
    for (level, only_taught), bar in bars.items():
        above = ascending[ascending_levels > bar]
        if not len(above):
            continue
        rows = linked[(levels[linked] == level) & (lifted_strict == only_taught)]
        at = np.searchsorted(above, direct[rows], side="left")
        ceiling = np.where(at < len(above), above[np.minimum(at, len(above) - 1)], np.inf)
        out[rows] = np.minimum(full[rows], np.maximum(direct[rows], ceiling - MARGIN))
    return out
