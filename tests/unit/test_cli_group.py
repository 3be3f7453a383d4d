"""The command line imports a command's module only when that command runs."""

from __future__ import annotations

import subprocess
import sys

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
    for module in ("assocmem.api.client", "assocmem.api.cli.memory", "assocmem.api.cli.mcp"):
        assert module not in loaded


def test_an_unknown_command_is_refused_with_the_known_ones_listed_in_help() -> None:
    refused = CliRunner().invoke(main, ["rememb"])
    assert refused.exit_code == 2
    assert "No such command 'rememb'" in refused.output
    listed = CliRunner().invoke(main, ["--help"]).output
    assert "write " in listed and "dead-letters" in listed
