"""The work of the workers' fold, in instructions counted by callgrind: the same count for
the same fold whatever else the machine does (on this shared VM, timings of one and the same
fold moved between 38 and 66 us an event from run to run). Two versions compare by it
exactly: run each with its own checkout's packages first on the path.

Writes `--notes` commit messages as log entries (a positive rating of the last note every
`--feedback-every`, as bench/history_scale.py appends them) to a file, then runs two
children under callgrind: one that only reads the file, one that reads it and folds the
entries as the workers do (`fold_entries` in chunks of 1,000: decode, check, apply, and the
counts matrix merged at the end). Their difference, per event, is the fold's work. Also
prints the state's content hash, which two versions must agree on.

    .venv/bin/python bench/fold_work.py ../shared/data/corpus_en.jsonl --notes 10000

About 2 minutes at 10,000 notes. Needs valgrind (Debian package `valgrind`).
"""

from __future__ import annotations

import argparse
import os
import pickle
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from skeleton import (  # bench/ is on sys.path when a script here runs
    authored_notes,
    load_corpus,
    with_feedback,
)

from assocmem.engine.events.envelope import encode_event
from assocmem.engine.position import Position
from assocmem.engine.snapshot.codec import content_hash
from assocmem.engine.state.state import State
from assocmem.workers.state.rebuild import fold_entries

CHUNK = 1000
"""Log entries the workers read and fold at once."""


def write_entries(corpus: Path, notes: int, feedback_every: int, path: Path) -> int:
    rows = load_corpus(corpus, notes)
    events = authored_notes(rows)
    if feedback_every:
        events = with_feedback(events, feedback_every)
    entries = [(Position(1000 + n, 0), encode_event(e)) for n, e in enumerate(events)]
    chunks = [entries[n : n + CHUNK] for n in range(0, len(entries), CHUNK)]
    path.write_bytes(pickle.dumps(chunks))  # our own file, read back by our own child
    return len(entries)


def child(path: Path, folding: bool) -> None:
    chunks = pickle.loads(path.read_bytes())
    if folding:
        state = State()
        fold_entries(state, chunks)
        state.counts.matrix()


def instructions(path: Path, folding: bool) -> int:
    command = ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null"]
    command += [sys.executable, __file__, "--child", str(path)] + (["--fold"] if folding else [])
    # Callgrind counts every thread, and BLAS's idle pool spins; string hashes are salted per
    # process. Unpinned, the same fold of 306 entries counted 61 to 82 M instructions
    environment = {
        **os.environ,
        "OPENBLAS_NUM_THREADS": "1",
        "OMP_NUM_THREADS": "1",
        "PYTHONHASHSEED": "0",
    }
    done = subprocess.run(command, capture_output=True, text=True, check=True, env=environment)
    found = re.search(r"Collected : (\d+)", done.stderr)
    if found is None:
        raise SystemExit(f"callgrind printed no count:\n{done.stderr[-2000:]}")
    return int(found.group(1))


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("corpus", type=Path, nargs="?", help="corpus_en.jsonl")
    parser.add_argument("--notes", type=int, default=10_000)
    parser.add_argument("--feedback-every", type=int, default=50, help="0: notes only")
    parser.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--fold", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child is not None:
        child(args.child, args.fold)
        return
    if args.corpus is None:
        parser.error("the corpus path is required")
    if shutil.which("valgrind") is None:
        raise SystemExit("valgrind is not installed (Debian package `valgrind`)")
    with tempfile.TemporaryDirectory(prefix="assocmem-fold-work-") as directory:
        path = Path(directory) / "entries.pickle"
        count = write_entries(args.corpus, args.notes, args.feedback_every, path)
        state = State()
        fold_entries(state, pickle.loads(path.read_bytes()))
        reading, folding = instructions(path, False), instructions(path, True)
    work = folding - reading
    print(
        f"fold of {count:,} log entries in chunks of {CHUNK:,}: {work:,} instructions,"
        f" {work / count:,.0f} an event; hash {content_hash(state)[:16]}"
    )


if __name__ == "__main__":
    main()
