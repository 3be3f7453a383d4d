"""`assocmem up` as a child process of a script or a test: start it, wait until it serves."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from assocmem.workers.runtime.redis_server import free_port

BANNER = "assocmem serving "
UNLIMITED = {"ASSOCMEM_KEY_REQUESTS": "0", "ASSOCMEM_KEY_EVENTS": "0", "ASSOCMEM_KEY_FAILURES": "0"}
"""The environment of a benchmark's pipeline: its rates are measured, not limited per key."""
DEFAULT_START_TIMEOUT = 90.0
"""Seconds `up` may take to print its URL."""


def spawn_up(
    home: Path, env: dict[str, str] | None = None, timeout: float = DEFAULT_START_TIMEOUT
) -> tuple[subprocess.Popen[str], str]:
    """Start `assocmem up --data HOME` on a free port with the embedded Redis; return it and its banner."""
    child_env = {k: v for k, v in os.environ.items() if k not in ("REDIS_URL", "ASSOCMEM_URL")}
    child_env.update(env or {})
    command = [sys.executable, "-m", "assocmem.api.cli", "up", "--data", str(home)]
    process = subprocess.Popen(
        [*command, "--port", str(free_port())],
        env=child_env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    deadline = time.monotonic() + timeout
    assert process.stdout is not None
    said: list[str] = []
    while time.monotonic() < deadline:
        line = process.stdout.readline()
        if line.startswith(BANNER):
            return process, line
        said = [*said[-4:], line.rstrip()] if line else said
        if not line and process.poll() is not None:
            raise RuntimeError(
                f"assocmem up exited with code {process.returncode}: " + " / ".join(said)
            )
    process.terminate()
    raise RuntimeError(f"assocmem up printed no URL within {timeout:.0f} s")


def banner_url(banner: str) -> str:
    return banner[len(BANNER) :].split()[0]
