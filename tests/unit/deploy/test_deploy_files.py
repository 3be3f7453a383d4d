"""The deploy files run the commands that tests/e2e/test_started_by_hand.py starts by hand
and proves (serve, worker, cron: a write, a read and a consolidation), with the image that
deploy/Dockerfile builds; no Docker runs here, so this is what is checked of them."""

from __future__ import annotations

import re
from pathlib import Path

import click
import yaml

from assocmem.api.cli import main
from tests.e2e.test_started_by_hand import SERVICES

DEPLOY = Path(__file__).parents[3] / "deploy"


def test_compose_runs_each_service_from_the_image_the_dockerfile_builds() -> None:
    compose = yaml.safe_load((DEPLOY / "compose.yaml").read_text())
    services = compose["services"]
    commands = {name: s["command"] for name, s in services.items() if name != "redis"}
    assert sorted(c[0] for c in commands.values()) == sorted(SERVICES)
    for name, command in commands.items():
        assert services[name]["build"] == {"context": "..", "dockerfile": "deploy/Dockerfile"}
        assert "pip install" not in " ".join(command), name  # installed in the image
        assert "REDIS_URL" in services[name]["environment"], name
    assert commands["api"][:1] == ["serve"] and "0.0.0.0" in commands["api"]
    assert services["api"]["ports"] == ["127.0.0.1:8765:8765"]  # the host's loopback only


def test_systemd_runs_each_service_once() -> None:
    started = []
    for unit in sorted((DEPLOY / "systemd").glob("*.service")):
        exec_start = re.search(r"^ExecStart=(\S+) (\w+)", unit.read_text(), re.MULTILINE)
        assert exec_start is not None, unit.name
        assert exec_start[1].endswith("/bin/assocmem"), unit.name
        started.append(exec_start[2])
    assert sorted(started) == sorted(SERVICES)


def test_the_image_runs_assocmem_as_a_user_that_is_not_root() -> None:
    dockerfile = (DEPLOY / "Dockerfile").read_text()
    stages = re.findall(r"^FROM ", dockerfile, re.MULTILINE)
    assert len(stages) == 2  # the compiler stays in the build stage
    final = dockerfile.rsplit("\nFROM ", 1)[1]
    assert "gcc" not in final
    users = re.findall(r"^USER (\S+)", final, re.MULTILINE)
    assert users and users[-1] not in ("root", "0")
    assert re.search(r'^ENTRYPOINT \["assocmem"\]', final, re.MULTILINE)
    assert re.search(r'^CMD \["serve"', final, re.MULTILINE)


def test_every_service_command_is_a_command_of_the_cli() -> None:
    assert set(SERVICES) <= set(main.list_commands(click.Context(main)))
