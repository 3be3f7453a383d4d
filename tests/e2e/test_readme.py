"""The README's walk-through, run command by command against a real pipeline.

Positions, hashes and dates differ from run to run: each one the README shows is
mapped to the one this run printed at the same place, and must stay consistent
after; a time of day and a duration may be any. Scores (three decimals) may differ by 0.003: time decay moves them a
little between the README's run and this one. A line `...` in an expected output
stands for any number of lines.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

from tests.e2e.pipeline import Pipeline, cli

README = Path(__file__).parents[2] / "README.md"
TOKEN = re.compile(r"\b\d{13}-\d+\b|(?<=hash )[0-9a-f]{16}\b|\b\d{4}-\d{2}-\d{2}\b")
MINUTE = re.compile(r"\b\d{4}-\d{2}-\d{2}T\d{2}:\d{2}\b")
"""A time of day: any stands for any (two commands a second apart may fall in two minutes)."""
DURATION = re.compile(r"(?<![\d.])\d+\.\d{3} s\b")
"""How long a command took: any (a machine's speed is no part of the output's meaning)."""
SCORE = re.compile(r"(?<![\d.])\d\.\d{3}(?![\d.])")
SCORE_TOLERANCE = 0.003


def walkthrough() -> list[tuple[list[str], list[str]]]:
    """(command arguments, expected output lines) for every `$ assocmem` line of the walk-through."""
    text = README.read_text()
    section = text[text.index("## A walk through") : text.index("Every command has `--help`")]
    steps: list[tuple[list[str], list[str]]] = []
    for block in re.findall(r"```\n(.*?)```", section, re.S):
        for line in block.splitlines():
            if line.startswith("$ assocmem "):
                steps.append((shlex.split(line[2:], comments=True)[1:], []))
            elif steps:
                steps[-1][1].append(line)
    return steps


class Tokens:
    def __init__(self) -> None:
        self.seen: dict[str, str] = {}

    def line_matches(self, expected: str, actual: str) -> bool:
        """Whether the lines agree once README tokens are mapped; a match teaches new mappings."""
        tentative = dict(self.seen)
        for readme_token, run_token in zip(
            TOKEN.findall(expected), TOKEN.findall(actual), strict=False
        ):
            if tentative.setdefault(readme_token, run_token) != run_token:
                return False
        mapped = DURATION.sub(
            "~", TOKEN.sub(lambda m: tentative.get(m.group(0), m.group(0)), expected)
        )
        actual = DURATION.sub("~", actual)
        if SCORE.sub("#", MINUTE.sub("@", mapped)) != SCORE.sub("#", MINUTE.sub("@", actual)):
            return False
        pairs = zip(SCORE.findall(mapped), SCORE.findall(actual), strict=True)
        if any(abs(float(a) - float(b)) > SCORE_TOLERANCE for a, b in pairs):
            return False
        self.seen = tentative
        return True

    def apply(self, args: list[str]) -> list[str]:
        return [TOKEN.sub(lambda m: self.seen[m.group(0)], a) for a in args]


def matches(expected: list[str], actual: list[str], tokens: Tokens) -> bool:
    if not expected:
        return not actual
    if expected[0].strip() == "...":
        return any(matches(expected[1:], actual[i:], tokens) for i in range(len(actual) + 1))
    return (
        bool(actual)
        and tokens.line_matches(expected[0], actual[0])
        and matches(expected[1:], actual[1:], tokens)
    )


def test_every_walkthrough_command_prints_what_the_readme_shows(tmp_path: Path) -> None:
    steps = walkthrough()
    assert len(steps) >= 10
    up = Pipeline(tmp_path / "data")
    try:
        tokens = Tokens()
        for args, expected in steps:
            output = cli(*tokens.apply(args), url=up.url).stdout.splitlines()
            assert matches(expected, output, tokens), f"assocmem {' '.join(args)}:\n" + "\n".join(
                output
            )
    finally:
        up.stop()
