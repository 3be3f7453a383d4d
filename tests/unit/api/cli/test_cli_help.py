"""Every CLI command has help with an example, and README documents it."""

from __future__ import annotations

from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from assocmem.api.cli import main

README = (Path(__file__).parents[4] / "README.md").read_text()


@pytest.mark.parametrize("name", main.list_commands(click.Context(main)))
def test_command_has_help_with_an_example_and_is_in_the_readme(name: str) -> None:
    result = CliRunner().invoke(main, [name, "--help"])
    assert result.exit_code == 0
    assert "Example: assocmem" in result.output or "Example: REDIS_URL=" in result.output
    assert f"assocmem {name}" in README
