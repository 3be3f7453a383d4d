"""Links never cost recall: link or chain evidence for a query concept a memory does not
carry never lifts it past a memory that carries clearly more of the question's weight.

"Clearly more" is decided by the two memories' own concepts, not by a constant share of
the question: a memory keeps its place above one whose links stand in for what it lacks
when it carries most of what that one lacks (more than half of its weight) and lacks
clearly less of the question itself, or when it carries every concept that one carries and
more. So what links add to a memory's score is capped just below the direct score of the
next memory above it that keeps its place. A memory that carries the whole question is
never passed by one that carries a part of it; one that carries a part and more is not
passed by one that carries that part alone; one that carries most of the question is not
passed by one that carries another part (the date a read names, say) and is linked to the
rest; a pure association (carrying none of the question) enters only below every memory
that carries more than half of it; memories that each carry a part of the question, none
clearly more (a paraphrase, a long question whose words spread over many notes), are
near-ties that links reorder, and there links find what words alone miss.

A link feedback taught (or strengthened) is evidence about the memories one rating named,
for the question it rated: a memory that carries none of the question and is found through
such a link enters below every memory that carries some of it. Else one rating makes its
memory the answer to every later question on the same subject (the questions of one
conversation, of one paragraph), ahead of the memory that answers it (bench/cmrc.py
--feedback).

Every read caps its candidates twice, so the cap runs in C where the extension `_dominance`
was built (setup.py builds it wherever a C compiler and Python's headers are); the numpy
here runs where it was not, and tests/unit/engine/recall/test_dominance.py holds the two to
the rule in words.
"""

from __future__ import annotations

import numpy as np

MARGIN = 1e-7
"""How far below the memory it may not pass a lifted memory stays."""

EPSILON = 1e-9
"""Shares of the question closer than this count as equal: sums of the same weights in
another order differ in their last bits."""


LACKS_AT_MOST = 5 / 8
"""Of what a lifted memory lacks, how much a memory that carries most of it may lack itself
and keep its place above it. Where the two carry nested parts of the question, carrying
most of what the other lacks already means lacking less than half of it, and this adds
nothing; where each carries a part the other lacks, it tells a memory that carries clearly
more from a near-tie. Half let a memory that carries a name and the date a read names,
linked to the rest, pass the one that carries the name and both rare words the question
asks; any lack below the lifted one's left too few near-ties to links in long questions
(bench/README.md, "Links never cost recall")."""


def keeps_place(
    carries: np.ndarray, weights: np.ndarray, carried: np.ndarray, rated: np.ndarray
) -> np.ndarray:
    """Per memory (row of `carries`: memories x query concepts) and lifted memory (row of
    `carried`, the concepts it carries), whether the memory keeps its place above the lifted
    one, whose links stand in for what it lacks: whether it carries more than half of the
    weight (`weights`, per query concept) that one lacks, and lacks clearly less of the
    question itself, or carries every concept that one carries (some) and more. Above one a
    taught link found (`rated`, per lifted memory), only whether it lacks less than half of
    what that one lacks: a rating is evidence about that memory for the question it rated,
    and asked again, the rated memory comes back."""
    have, lacks = carries.astype(np.float64), ~carried
    lacked = lacks @ weights
    holds = have @ (lacks * weights).T
    own_lack = (1.0 - have @ weights)[:, None]
    keep = (holds - lacked / 2 > EPSILON) & (LACKS_AT_MOST * lacked - own_lack > EPSILON)
    keep |= _nests(carries, carried) & ~rated
    if rated.any():
        keep[:, rated] = (lacked / 2 - own_lack > EPSILON)[:, rated]
    return keep


def _nests(carries: np.ndarray, carried: np.ndarray) -> np.ndarray:
    """Per memory and lifted memory, whether the memory carries every query concept the
    lifted one carries, and more, the lifted one carrying some."""
    have = carries.astype(np.int64)
    theirs = carried.astype(np.int64)
    shared = have @ theirs.T
    return (shared == theirs.sum(axis=1)) & (have.sum(axis=1)[:, None] > shared) & (shared > 0)


def bounded_in_python(
    full: np.ndarray,
    direct: np.ndarray,
    carries: np.ndarray,
    weights: np.ndarray,
    taught: np.ndarray | None = None,
    floor: float = -np.inf,
) -> np.ndarray:
    """`full` scores, each capped so that what it holds beyond its `direct` score never takes
    it past a memory whose direct score is at least its own and that carries most of what it
    lacks and lacks clearly less, or all it carries and more (`carries`: per memory, which
    query concepts it carries; `weights`: per query concept, its share of the question); one
    that a taught link found (`taught`, per memory), past one that lacks less than half of
    what it lacks, or if it carries none of the question, past any memory that carries some.
    Scores below `floor`, which can reach no place a read returns, are left as they are."""
    linked = np.flatnonzero((full > direct) & (full >= floor))
    if not len(linked) or not carries.shape[1]:
        return full
    weights = np.asarray(weights, dtype=np.float64)
    if taught is None:
        carried, group = _patterns(carries[linked])
        by_rating = np.zeros(len(carried), dtype=bool)
    else:
        kinds, group = _patterns(np.column_stack([carries[linked], taught[linked]]))
        carried, by_rating = kinds[:, :-1], kinds[:, -1]
    only_taught = by_rating & ~carried.any(axis=1)
    lacked = (~carried) @ weights
    # to keep its place above a kind of lifted memory, a memory carries more than half of
    # what it lacks and lacks less than its share of it (above one only a taught link
    # found, it carries some): one that carries no more than this keeps its place above none
    share = np.where(by_rating, 0.5, LACKS_AT_MOST)
    needs = np.maximum(lacked / 2, 1.0 - share * lacked)
    # or carries all it carries and more, at least its lightest lack (above one a rating did
    # not find)
    lightest = np.where(carried, np.inf, weights).min(axis=1, initial=np.inf)
    more = 1.0 - lacked + np.where(np.isfinite(lightest), lightest, 0.0) / 2
    needs = np.where(by_rating | ~carried.any(axis=1), needs, np.minimum(needs, more))
    least = np.where(only_taught, 0.0, needs).min()
    pool = np.flatnonzero((direct >= direct[linked].min()) & (carries @ weights - least > EPSILON))
    if not len(pool):
        return full
    # the memories that may keep their place, by the query concepts they carry: few kinds
    held, held_kind = _patterns(carries[pool])
    keeping = keeps_place(held, weights, carried, by_rating)
    keeping[:, only_taught] = True
    lifted = direct[linked]
    ceiling = np.full(len(linked), np.inf)
    for k in np.flatnonzero(keeping.any(axis=1)).tolist():
        same = np.sort(direct[pool[held_kind == k]])
        at = np.searchsorted(same, lifted, side="left")
        above = np.where(at < len(same), same[np.minimum(at, len(same) - 1)], np.inf)
        ceiling = np.where(keeping[k, group], np.minimum(ceiling, above), ceiling)
    out = full.copy()
    out[linked] = np.minimum(full[linked], np.maximum(lifted, ceiling - MARGIN))
    return out


def _patterns(flags: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct rows of a boolean matrix, and per row, which of them it is."""
    width = flags.shape[1]
    if width > 62:
        distinct, which = np.unique(flags, axis=0, return_inverse=True)
        return distinct, which.reshape(-1)
    bits = 1 << np.arange(width, dtype=np.int64)
    codes = flags.astype(np.int64) @ bits
    if width > 16:
        distinct, which = np.unique(codes, return_inverse=True)
    else:  # a table of every code is smaller than a sort
        present = np.bincount(codes, minlength=1 << width) > 0
        distinct, which = np.flatnonzero(present), (np.cumsum(present) - 1)[codes]
    return (distinct[:, None] & bits) != 0, which.reshape(-1)


def bounded_in_c(
    full: np.ndarray,
    direct: np.ndarray,
    carries: np.ndarray,
    weights: np.ndarray,
    taught: np.ndarray | None = None,
    floor: float = -np.inf,
) -> np.ndarray:
    """`bounded_in_python`, in C."""
    if not carries.shape[1]:
        return full
    out = np.array(full, dtype=np.float64)
    cap_lifts(
        out,
        np.ascontiguousarray(direct, dtype=np.float64),
        np.ascontiguousarray(carries, dtype=bool),
        None if taught is None else np.ascontiguousarray(taught, dtype=bool),
        np.ascontiguousarray(weights, dtype=np.float64),
        float(floor),
        LACKS_AT_MOST,
        MARGIN,
        EPSILON,
    )
    return out


try:
    from assocmem.engine.recall._dominance import cap_lifts
except ImportError:  # not built: no C compiler or no Python headers where it was installed
    bounded = bounded_in_python
    NATIVE = False
else:
    bounded = bounded_in_c
    NATIVE = True

NOT_NATIVE = (
    "the reads' C extension was not built at install (no C compiler or no Python headers):"
    " the cap on what links add runs in numpy, several times as long; apt-get install gcc"
    " python3-dev, then make clean install"
)
