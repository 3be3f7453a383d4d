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


ALL_BUT_POSITIVE = ("--checks", "all", "--exclude-checks", "positive_data_acceptance")


def schemathesis(
    url: str, *options: str, checks: tuple[str, ...] = ALL_BUT_POSITIVE
) -> subprocess.CompletedProcess[str]:
    st = shutil.which("st", path=str(Path(sys.executable).parent)) or "st"
    return subprocess.run(
        [
            st,
            "run",
            f"{url}/openapi.json",
            *checks,
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


TEXT_WITH_WORDS = "text must hold a content word (a stop word alone is refused)"
POINT = "a position, or an ISO time of a real calendar day"
SCHEMA_CANNOT_SAY = {
    "GET /v1/activities": "tz must be an IANA zone",
    "GET /v1/activities/summary": "tz must be an IANA zone",
    "GET /v1/audit/link": "source and target must be two concepts, not one",
    "POST /v1/audit/link/jobs": "source and target must be two concepts, not one",
    "GET /v1/audit/link/ppmi": "source and target must be two concepts, not one",
    "GET /v1/diff": POINT,
    "GET /v1/export": POINT,
    "GET /v1/replay": POINT,
    "GET /v1/state": POINT,
    "POST /v1/replay/jobs": POINT,
    "POST /v1/read": f"{TEXT_WITH_WORDS}; as_of is {POINT}",
    "GET /v1/memories": "filters is JSON inside a parameter",
    "POST /v1/chain": TEXT_WITH_WORDS,
    "POST /v1/memories": f"{TEXT_WITH_WORDS}; expires_at must be in the future",
    "POST /v1/memories/batch": TEXT_WITH_WORDS,
    "POST /v1/events/batch": TEXT_WITH_WORDS,
    "POST /v1/feedback": TEXT_WITH_WORDS,
    "POST /v1/documents": "text must hold a sentence of two concepts",
    "PATCH /v1/memories/{memory_id}": TEXT_WITH_WORDS,
    "POST /v1/import": "each line's event has the fields of its own type",
    "POST /v1/jobs/{job_id}/requeue": "the id must be of a job that failed (the queue's state)",
    "POST /v1/keys": "a key pinned to a user, session or namespace is neither admin nor operator",
}
"""Operations whose valid inputs a JSON schema cannot tell apart from invalid ones: the
positive check (any input the document allows is accepted) runs on every other one."""

ENDS_THE_RUN = ("DELETE /v1/keys/{key_id}", "POST /v1/keys/{key_id}/rotate")
"""Schemathesis learns ids from answers (the key listing's too): a valid revocation or
rotation of the run's own key would leave every later request a 401, checking nothing."""


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
        kept = [f"--exclude-name={name}" for name in ENDS_THE_RUN]
        every = schemathesis(up.url, *key, *kept)
        assert every.returncode == 0, every.stdout[-4000:]
        unsayable = [f"--exclude-name={name}" for name in SCHEMA_CANNOT_SAY]
        positive = ("--checks", "positive_data_acceptance")
        accepted = schemathesis(
            up.url, *key, "--mode", "positive", *unsayable, *kept, checks=positive
        )
        assert accepted.returncode == 0, accepted.stdout[-4000:]
        assert "Tested: 20" in accepted.stdout, "every other operation was tried"
        assert "Authentication failed" not in every.stdout + accepted.stdout
        cli_json("state", url=up.url)  # the run's key still answers
        ending = [f"--include-name={name}" for name in ENDS_THE_RUN]
        last = schemathesis(up.url, *key, *ending)
        assert last.returncode == 0, last.stdout[-4000:]
        assert "Tested: 2" in last.stdout
    finally:
        up.stop()
    assert "Traceback" not in (up.home / "logs" / "api.log").read_text()
