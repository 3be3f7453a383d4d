"""A retrying loop says once that Redis is gone and once that it is back, not a traceback
at every try; other failures keep their traceback."""

from __future__ import annotations

import logging

import pytest
import redis

from assocmem.workers.errors import StoreUnavailable
from assocmem.workers.store.redis.errors import Outage


def test_an_outage_is_said_once_when_it_starts_and_once_when_it_ends(
    caplog: pytest.LogCaptureFixture,
) -> None:
    outage = Outage("fold scheduling")
    with caplog.at_level(logging.WARNING):
        outage.passed()
        for _ in range(5):
            outage.failed(redis.ConnectionError("Error 111 connecting"), 0.2)
        outage.failed(StoreUnavailable("cannot list the tenants"), 0.2)
        outage.failed(redis.TimeoutError("timed out"), 0.2)
        outage.failed(redis.ResponseError("MISCONF Redis is configured to save RDB"), 0.2)
        outage.passed()
        outage.passed()
    assert [(r.levelname, r.getMessage(), r.exc_info) for r in caplog.records] == [
        (
            "WARNING",
            "fold scheduling: Redis is unavailable (Error 111 connecting); trying until it answers",
            None,
        ),
        ("WARNING", "fold scheduling: Redis answers again", None),
    ]


def test_any_other_failure_is_logged_each_time_with_its_traceback(
    caplog: pytest.LogCaptureFixture,
) -> None:
    outage = Outage("cron")
    with caplog.at_level(logging.WARNING):
        for _ in range(2):
            try:
                raise redis.ResponseError("WRONGTYPE Operation against a key")
            except redis.ResponseError as exc:
                outage.failed(exc, 5.0)
    assert [r.getMessage() for r in caplog.records] == ["cron failed; trying again in 5.0 s"] * 2
    assert all(r.levelname == "ERROR" and r.exc_info for r in caplog.records)
