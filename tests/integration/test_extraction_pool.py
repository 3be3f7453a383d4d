"""A large batch's concepts extracted across processes are the ones extracted here."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from assocmem.engine.text.extraction import extract
from assocmem.workers.app.extraction_pool import (
    POOLED_TEXTS,
    SHARE_BOUNDS,
    Balance,
    ExtractionPool,
    _split,
)
from tests.texts import sample_texts


@pytest.fixture
def pool() -> Iterator[ExtractionPool]:
    started = ExtractionPool(helpers=1)
    yield started
    started.close()


def test_a_large_batch_extracted_by_helpers_is_what_one_process_extracts(
    pool: ExtractionPool,
) -> None:
    texts = sample_texts()
    assert len(texts) >= POOLED_TEXTS
    expected = [extract(t) for t in texts]
    assert pool.extract_many(texts) == expected  # here, while the helper starts
    assert pool.ready(timeout=60)
    assert pool.extract_many(texts) == expected  # with the helper


def test_the_first_large_batch_does_not_wait_for_helpers_to_start() -> None:
    texts = sample_texts()
    extract(texts[0])  # this process's tables loaded, as the API loads them at start
    pool = ExtractionPool(helpers=1)
    try:
        pool.extract_many(texts)
        # Answered before the helper could have loaded its tables (about a second): had it
        # waited for the helper, the helper would be ready by now
        assert not pool.ready(timeout=0)
    finally:
        pool.close()


def test_a_helper_that_died_is_replaced_and_the_batch_still_answered(
    pool: ExtractionPool,
) -> None:
    texts = sample_texts()
    assert pool.ready(timeout=60)
    assert pool._executor is not None
    for pid in list(pool._executor._processes):  # type: ignore[attr-defined]
        os.kill(pid, signal.SIGKILL)
    assert pool.extract_many(texts) == [extract(t) for t in texts]
    assert pool.ready(timeout=60)  # a new helper
    assert pool.extract_many(texts) == [extract(t) for t in texts]


def test_small_batches_and_no_helpers_stay_in_this_process() -> None:
    texts = sample_texts()
    alone = ExtractionPool(helpers=0)
    assert alone.extract_many(texts) == [extract(t) for t in texts]
    assert alone._executor is None
    small = ExtractionPool(helpers=1)
    small.extract_many(texts[: POOLED_TEXTS - 1])
    assert small._executor is None


def test_helpers_end_when_the_process_that_started_them_is_killed(tmp_path: Path) -> None:
    """A SIGKILLed API process leaves no helper waiting for work for ever."""
    script = tmp_path / "parent.py"
    script.write_text(
        "import sys, time\n"
        f"sys.path.insert(0, {str(Path(__file__).parents[2])!r})\n"
        "from tests.texts import sample_texts\n"
        "from assocmem.workers.app.extraction_pool import ExtractionPool\n"
        "if __name__ == '__main__':\n"
        "    pool = ExtractionPool(helpers=1)\n"
        "    pool.ready(timeout=60)\n"
        "    pool.extract_many(sample_texts())\n"
        "    print(*pool._executor._processes, flush=True)\n"
        "    time.sleep(600)\n"
    )
    parent = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True)
    assert parent.stdout is not None
    helpers = [int(pid) for pid in parent.stdout.readline().split()]
    assert helpers and all(alive(pid) for pid in helpers)
    parent.kill()
    parent.wait()
    deadline = time.monotonic() + 5
    while any(alive(pid) for pid in helpers) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(alive(pid) for pid in helpers)


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat") as stat:  # a zombie is gone for this purpose
        return stat.read().split(") ")[-1][0] != "Z"


def test_the_share_extracted_here_moves_to_where_both_sides_end_together() -> None:
    balance = Balance(parts=2)
    assert balance.here == 0.5
    for _ in range(30):  # this process extracts at a third of a helper's speed
        balance.measured(here_rate=1_000.0, away_rate=3_000.0)
    assert abs(balance.here - 0.25) < 0.01
    balance.measured(here_rate=0.0, away_rate=3_000.0)  # nothing measured: unchanged
    assert abs(balance.here - 0.25) < 0.01
    for _ in range(100):
        balance.measured(here_rate=1.0, away_rate=1e9)
    assert balance.here == SHARE_BOUNDS[0]  # every batch keeps a part here


def test_a_batch_is_split_by_characters_at_the_share_asked_for() -> None:
    texts = ["x" * 10] * 100
    here, away = _split(texts, 2, 0.3)
    assert (len(here), len(away)) == (30, 70)
    assert here + away == texts
    assert [len(run) for run in _split(texts, 3, 0.5)] == [50, 25, 25]
