"""Every benchmark script starts: a module moved or renamed under a script's imports fails
here, not when someone runs the benchmark to check a claim."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).parents[3]
SCRIPTS = sorted(p.name for p in (ROOT / "bench").glob("*.py"))

# One process imports every script (the imports are most of the cost), each as it runs
# from the command line, asked only for its help.
RUN_ALL = """
import runpy, sys
failed = []
for name in sys.argv[1:]:
    sys.argv = [name, "--help"]
    try:
        runpy.run_path(name, run_name="__main__")
    except SystemExit as exc:
        if exc.code not in (0, None):
            failed.append(f"{name}: exit {exc.code}")
    except Exception as exc:
        failed.append(f"{name}: {type(exc).__name__}: {exc}")
sys.stderr.write("".join(f"FAILED {f}\\n" for f in failed))
"""


def test_every_benchmark_script_imports_and_answers_help() -> None:
    done = subprocess.run(
        [sys.executable, "-c", RUN_ALL, *SCRIPTS],
        cwd=ROOT / "bench",
        capture_output=True,
        text=True,
        timeout=300,
    )
    failed = [line for line in done.stderr.splitlines() if line.startswith("FAILED ")]
    assert SCRIPTS and done.returncode == 0 and not failed, failed or done.stderr[-2000:]
