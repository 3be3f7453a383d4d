"""Schemathesis against a live `up`, every check on (but positive_data_acceptance: a JSON
schema cannot say "text with a content word" or "an id of a written memory"): no 5xx, no
response that breaks the OpenAPI document, and invalid requests leave the log untouched."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import urllib3

from assocmem.api.ops.spawn import UNLIMITED
from tests.e2e.pipeline import Pipeline, cli_json

SEED = "7"
EXAMPLES = "25"


def schemathesis(url: str, *options: str) -> subprocess.CompletedProcess[str]:
    st = shutil.which("st", path=str(Path(sys.executable).parent)) or "st"
    return subprocess.run(
        [
            st,
            "run",
            f"{url}/openapi.json",
            "--checks",
            "all",
            "--exclude-checks",
            "positive_data_acceptance",
            "--max-examples",
            EXAMPLES,
            "--seed",
            SEED,
            "--no-color",
            *options,
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )


UNCONSTRAINED = {"type", "title", "description"}


def nothing_to_negate(url: str) -> list[str]:
    """Operations with no input a fuzzer can make invalid: no body, and no parameter but
    free strings (the key is sent with every request). Schemathesis's fuzzing phase cannot
    generate a case for them and reports a schema error; the coverage phase covers them."""
    document = urllib3.request("GET", f"{url}/openapi.json").json()
    names = []
    for path, operations in document["paths"].items():
        for method, operation in operations.items():
            free = all(
                set(parameter["schema"]) <= UNCONSTRAINED
                and parameter["schema"].get("type") == "string"
                for parameter in operation.get("parameters", [])
            )
            if "requestBody" not in operation and free:
                names.append(f"{method.upper()} {path}")
    return names


@pytest.mark.slow
def test_the_live_api_keeps_its_document_and_refuses_invalid_requests_untouched(
    tmp_path: Path,
) -> None:
    up = Pipeline(tmp_path / "data", UNLIMITED)  # every request answered, none refused for rate
    key = ("--header", f"Authorization: Bearer {up.key}")
    try:
        cli_json("write", "the billing job timed out", url=up.url)
        before = cli_json("state", url=up.url)
        # The listing's answers would hand the fuzzer the ids of real memories, and a valid
        # change of one (an importance), sent as the negative case of a part the API does
        # not read, moves the log: its own invalid inputs are the last run's to check.
        negative = ("--mode", "negative", "--exclude-name", "GET /v1/memories")
        invalid = schemathesis(up.url, *key, *negative, "--phases", "coverage")
        assert invalid.returncode == 0, invalid.stdout[-4000:]
        skipped = [f"--exclude-name={name}" for name in nothing_to_negate(up.url)]
        # Negatives of the activity listing's many optional patterned parameters are mostly
        # filtered out as valid: Hypothesis's health check would stop the run for it.
        tolerant = ("--suppress-health-check", "filter_too_much")
        invalid = schemathesis(up.url, *key, *negative, "--phases", "fuzzing", *tolerant, *skipped)
        assert invalid.returncode == 0, invalid.stdout[-4000:]
        after = cli_json("state", url=up.url)
        assert (after["position"], after["hash"]) == (before["position"], before["hash"])
        every = schemathesis(up.url, *key)
        assert every.returncode == 0, every.stdout[-4000:]
    finally:
        up.stop()
    assert "Traceback" not in (up.home / "logs" / "api.log").read_text()
