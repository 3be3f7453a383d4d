"""Where a client finds the pipeline when it is told nothing: ASSOCMEM_URL (with
ASSOCMEM_API_KEY), else the `assocmem up` running from ASSOCMEM_HOME (by default
`.assocmem` here): the URL in its run file and its operator key, else the default URL."""

from __future__ import annotations

import os
from pathlib import Path

import orjson

RUN_FILE = "run.json"
KEY_FILE = "api-key"
"""The operator key `up` made on first start (mode 600): the CLI's key by default."""
DEFAULT_URL = "http://127.0.0.1:8765"
DEFAULT_HOME = ".assocmem"


def local_home() -> Path:
    return Path(os.environ.get("ASSOCMEM_HOME") or DEFAULT_HOME)


def local_url(home: Path) -> str:
    """The URL the `up` of `home` serves on, from its run file; the default without one."""
    try:
        return str(orjson.loads((home / RUN_FILE).read_bytes())["url"])
    except (OSError, ValueError, KeyError, TypeError):
        return DEFAULT_URL


def read_key_file(home: Path) -> str | None:
    try:
        return (home / KEY_FILE).read_text().strip() or None
    except OSError:
        return None


def where(url: str | None, api_key: str | None) -> tuple[str, str | None]:
    """The URL and key a client uses: those given, else ASSOCMEM_URL and ASSOCMEM_API_KEY,
    else the local `up`'s. The local operator key goes only to the local `up`: a URL given
    (or in ASSOCMEM_URL) is sent only a key given (or in ASSOCMEM_API_KEY)."""
    key = api_key or os.environ.get("ASSOCMEM_API_KEY") or None
    url = url or os.environ.get("ASSOCMEM_URL") or None
    if url is not None:
        return url, key
    home = local_home()
    return local_url(home), key or read_key_file(home)
