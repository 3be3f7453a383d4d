"""PPMI kept in step with the fold: derived per row on demand (what reads do) vs rebuilt whole.

Folds N commit messages through the pure engine, then times (1) rebuilding the
whole PPMI matrix from the counts, as a per-snapshot rebuild would, and (2)
deriving the rows a read needs from the exact counts and marginals, which is
what `engine.links` does, cold (no row cache).

    .venv/bin/python bench/ppmi.py ../shared/data/corpus_en.jsonl --notes 20000
"""

from __future__ import annotations

import argparse
import random
import time
from pathlib import Path

import numpy as np
import orjson
import scipy.sparse
from skeleton import written_event  # bench/ is on sys.path when a script here runs

from assocmem.engine.events.fold import fold_from_zero
from assocmem.engine.recall.links import CONTEXT_SMOOTHING, LinkWeights


def whole_ppmi(counts: scipy.sparse.csr_array) -> scipy.sparse.csr_array:
    marginals = np.asarray(counts.sum(axis=1)).ravel().astype(np.float64)
    context = marginals**CONTEXT_SMOOTHING
    coo = counts.tocoo()
    pmi = np.log(coo.data * context.sum() / (marginals[coo.row] * context[coo.col]))
    keep = pmi > 0
    return scipy.sparse.csr_array((pmi[keep], (coo.row[keep], coo.col[keep])), shape=counts.shape)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("corpus", type=Path)
    parser.add_argument("--notes", type=int, default=20_000)
    parser.add_argument("--rows", type=int, default=300, help="rows derived on demand")
    args = parser.parse_args()
    events = []
    with args.corpus.open("rb") as handle:
        for n, line in enumerate(handle):
            if n >= args.notes:
                break
            row = orjson.loads(line)
            events.append(written_event(row["text"][:2000], float(row["ts"]), n))
    start = time.perf_counter()
    state = fold_from_zero(events)
    counts = state.counts.matrix()
    print(
        f"fold of {len(events):,} memories: {time.perf_counter() - start:.1f} s; "
        f"{len(state.concepts):,} concepts, {counts.nnz // 2:,} links"
    )
    rebuilds = []
    for _ in range(3):
        start = time.perf_counter()
        whole_ppmi(counts)
        rebuilds.append(time.perf_counter() - start)
    concepts = random.Random(1).sample(
        range(len(state.concepts)), min(args.rows, len(state.concepts))
    )
    weights = LinkWeights(state)
    start = time.perf_counter()
    for i in concepts:
        weights.row(i, 2.0)
    per_row = (time.perf_counter() - start) / len(concepts)
    print(f"whole PPMI rebuild: median {np.median(rebuilds) * 1000:.0f} ms")
    print(
        f"one row on demand (cold): mean {per_row * 1000:.2f} ms; a standard read derives 1-3 rows, "
        f"a deep read up to 23"
    )


if __name__ == "__main__":
    main()
