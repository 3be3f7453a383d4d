"""Keys as a new user meets them: `up` makes an operator key only its owner can read, the
CLI finds it, a key made for another tenant sees that tenant only, and a revoked key is
refused."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

from assocmem.api.client.local import KEY_FILE
from tests.e2e.pipeline import Pipeline, cli, cli_json


def as_key(key: str, *args: str, url: str) -> tuple[int, str]:
    """A CLI command run with `key` (the operator key left out of its environment)."""
    done = cli(*args, "--api-key", key, url=url, check=False)
    return done.returncode, done.stdout + done.stderr


def test_keys_from_the_cli_keep_tenants_apart_and_a_revoked_key_out(tmp_path: Path) -> None:
    up = Pipeline(tmp_path / "data")
    try:
        key_file = up.home / KEY_FILE
        assert stat.S_IMODE(os.stat(key_file).st_mode) == 0o600
        assert up.url.startswith("http://127.0.0.1:")
        cli("write", "the default tenant's billing note", "--concepts", "billing", url=up.url)
        made = cli_json("keys", "create", "--tenant", "acme", "--agent", "planner", url=up.url)
        assert made["tenant"] == "acme" and made["key"].startswith("amk_")
        code, _ = as_key(
            made["key"], "write", "acme's billing note", "--concepts", "billing", url=up.url
        )
        assert code == 0
        code, out = as_key(made["key"], "read", "--concepts", "billing", "--json", url=up.url)
        assert code == 0 and "acme's billing note" in out and "default tenant" not in out
        code, out = as_key(made["key"], "jobs", url=up.url)
        assert code != 0 and "'admin' permission" in out
        cli("keys", "revoke", made["id"], url=up.url)
        code, out = as_key(made["key"], "read", "--concepts", "billing", url=up.url)
        assert code != 0 and "unknown or revoked" in out
        pinned = cli_json(
            "keys",
            "create",
            "--agent",
            "alices",
            "--permissions",
            "read,write",
            "--user",
            "alice",
            url=up.url,
        )
        assert pinned["user"] == "alice"
        code, out = as_key(pinned["key"], "read", "billing", "--user", "bob", url=up.url)
        assert code != 0 and "pinned to user 'alice'" in out
        code, out = as_key("amk_nothing", "state", url=up.url)
        assert code != 0 and "unknown or revoked" in out
    finally:
        up.stop()


def test_rotating_the_last_operator_key_replaces_it_in_the_local_key_file(tmp_path: Path) -> None:
    up = Pipeline(tmp_path / "data")
    try:
        key_file = up.home / KEY_FILE
        old = key_file.read_text().strip()
        env = {k: v for k, v in os.environ.items() if k != "ASSOCMEM_API_KEY"}
        env |= {"ASSOCMEM_URL": up.url, "ASSOCMEM_HOME": str(up.home)}

        def local(*args: str) -> subprocess.CompletedProcess[str]:
            return subprocess.run(
                [sys.executable, "-m", "assocmem.api.cli", *args],
                env=env,
                capture_output=True,
                text=True,
                timeout=120,
            )

        (operator,) = [k for k in json.loads(local("keys", "list", "--json").stdout)["keys"]]
        rotated = local("keys", "rotate", operator["id"], "--json")
        assert rotated.returncode == 0, rotated.stderr
        made = json.loads(rotated.stdout)
        assert made["operator"] and made["id"] != operator["id"]
        assert key_file.read_text().strip() == made["key"] != old
        assert stat.S_IMODE(os.stat(key_file).st_mode) == 0o600
        assert local("state", "--json").returncode == 0  # the CLI goes on with the new key
        code, out = as_key(old, "state", url=up.url)
        assert code != 0 and "unknown or revoked" in out
    finally:
        up.stop()
