"""Logging of every assocmem process: one JSON object per line (time, level, logger,
message, the request id while a request is served, the exception), or plain text with
ASSOCMEM_LOG_FORMAT=text; SIGUSR1 writes every thread's stack there."""

from __future__ import annotations

import contextvars
import faulthandler
import logging
import os
import signal

from pythonjsonlogger.json import JsonFormatter

current_request_id: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "request_id", default=None
)
"""The id of the request being served (api/http/request_ids.py sets it), on every log line."""

TEXT = "%(asctime)s %(name)s %(levelname)s %(message)s"


class _RequestId(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        request_id = current_request_id.get()
        if request_id is not None:
            record.request_id = request_id
        return True


def configure_logging(level: int = logging.INFO) -> None:
    handler = logging.StreamHandler()
    handler.addFilter(_RequestId())
    if os.environ.get("ASSOCMEM_LOG_FORMAT", "json") == "text":
        handler.setFormatter(logging.Formatter(TEXT))
    else:
        handler.setFormatter(
            JsonFormatter(
                "%(asctime)s %(levelname)s %(name)s %(message)s",
                rename_fields={"asctime": "time", "levelname": "level", "name": "logger"},
            )
        )
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)


def stacks_on_sigusr1() -> None:
    """Where a process that should have ended hangs: `kill -USR1 PID` writes the stack of
    each of its threads to its log (stderr), and it goes on."""
    faulthandler.register(signal.SIGUSR1, all_threads=True)
