"""The command line imports a command's module only when that command runs."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from assocmem.api.cli import main


def test_starting_the_api_imports_no_client_command() -> None:
    """`up` starts `serve` and the workers through this command line: each start paid for
    every client command's module (the HTTP client's among them) before it did anything."""
    probe = (
        "import sys; from assocmem.api.cli import main;"
        " main.get_command(None, 'serve'); main.get_command(None, 'worker');"
        " print(sorted(m for m in sys.modules if m.startswith('assocmem.api.')))"
    )
    loaded = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    ).stdout
    assert "assocmem.api.cli.pipeline" in loaded
    for module in ("assocmem.api.client.sync", "assocmem.api.cli.memory", "assocmem.api.cli.mcp"):
        assert module not in loaded


def test_an_unknown_command_is_refused_with_the_known_ones_listed_in_help() -> None:
    refused = CliRunner().invoke(main, ["rememb"])
    assert refused.exit_code == 2
    assert "No such command 'rememb'" in refused.output
    listed = CliRunner().invoke(main, ["--help"]).output
    assert "write " in listed and "dead-letters" in listed


def test_a_command_run_away_from_any_key_says_where_keys_come_from(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """It used to reach whatever listened on the default port and print its 401, which
    says to make a key with `keys create` (a command that needs a key itself). A URL given
    is asked as before: it may be down, or want a key its operator gives."""
    monkeypatch.chdir(tmp_path)
    for name in ("ASSOCMEM_API_KEY", "ASSOCMEM_HOME", "ASSOCMEM_URL"):
        monkeypatch.delenv(name, raising=False)
    refused = CliRunner().invoke(main, ["state"])
    assert refused.exit_code == 1
    assert "no API key: none given (--api-key, ASSOCMEM_API_KEY)" in refused.output
    assert ".assocmem/api-key" in refused.output and "ASSOCMEM_HOME" in refused.output
    elsewhere = CliRunner().invoke(main, ["state", "--url", "http://127.0.0.1:9"])
    assert elsewhere.exit_code == 1 and "not reachable at http://127.0.0.1:9" in elsewhere.output
