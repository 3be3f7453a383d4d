"""A large batch's concepts extracted across processes are the ones extracted here."""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator

import pytest

from assocmem.engine.extraction import extract
from assocmem.workers.extraction_pool import POOLED_TEXTS, ExtractionPool

from ..texts import sample_texts


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
    assert pool.extract_many(texts) == [extract(t) for t in texts]
    assert pool._executor is not None  # helpers did take part


def test_a_helper_that_died_is_replaced_and_the_batch_still_answered(
    pool: ExtractionPool,
) -> None:
    texts = sample_texts()
    pool.extract_many(texts)
    assert pool._executor is not None
    for pid in list(pool._executor._processes):  # type: ignore[attr-defined]
        os.kill(pid, signal.SIGKILL)
    assert pool.extract_many(texts) == [extract(t) for t in texts]
    assert pool.extract_many(texts) == [extract(t) for t in texts]  # a new helper


def test_small_batches_and_no_helpers_stay_in_this_process() -> None:
    texts = sample_texts()
    alone = ExtractionPool(helpers=0)
    assert alone.extract_many(texts) == [extract(t) for t in texts]
    assert alone._executor is None
    small = ExtractionPool(helpers=1)
    small.extract_many(texts[: POOLED_TEXTS - 1])
    assert small._executor is None
