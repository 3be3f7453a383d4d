"""Every answer carries a request id, and every log line written while serving it too: one
JSON object per line."""

from __future__ import annotations

import logging
from collections.abc import Iterator

import orjson
import pytest
from fastapi.testclient import TestClient

from assocmem.api.http.app import create_app
from assocmem.api.logs import configure_logging, current_request_id
from assocmem.workers.runtime.settings import Settings


@pytest.fixture
def http(settings: Settings) -> Iterator[TestClient]:
    with TestClient(create_app(settings)) as client:
        yield client


def test_an_answer_echoes_a_plain_request_id_and_makes_one_otherwise(http: TestClient) -> None:
    assert (
        http.get("/healthz", headers={"x-request-id": "trace-42"}).headers["x-request-id"]
        == "trace-42"
    )
    made = http.get("/healthz", headers={"x-request-id": "x" * 500}).headers["x-request-id"]
    assert len(made) == 32 and made != "x" * 500
    assert http.get("/v1/health").headers["x-request-id"]  # refused answers too (401)


@pytest.fixture
def root_logging() -> Iterator[None]:
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    yield
    root.handlers[:], root.level = handlers, level


def test_log_lines_are_json_with_the_request_id(
    capsys: pytest.CaptureFixture[str], root_logging: None
) -> None:
    configure_logging()
    token = current_request_id.set("trace-7")
    try:
        logging.getLogger("assocmem.test").warning("folded %d events", 3)
    finally:
        current_request_id.reset(token)
    logging.getLogger("assocmem.test").error("outside a request")
    first, second = (orjson.loads(line) for line in capsys.readouterr().err.splitlines())
    assert first["message"] == "folded 3 events" and first["request_id"] == "trace-7"
    assert first["level"] == "WARNING" and first["logger"] == "assocmem.test"
    assert "request_id" not in second
