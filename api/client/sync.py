"""Python client of the HTTP API, used by the CLI.

On urllib3: through httpx each read took a good part of a millisecond longer, paired
medians of the same queries sent through both in one run.
"""

from __future__ import annotations

import time
import urllib.parse
from collections.abc import Callable
from typing import Any

import orjson
import urllib3
from urllib3.connection import HTTPConnection

from assocmem.api.client.calls import WRITES, Call, Calls
from assocmem.api.client.local import where
from assocmem.api.errors import READ_TIMED_OUT, ApiError, BadRequest, ServiceDown, error_for
from assocmem.engine.position import Position

DEFAULT_TIMEOUT = 30.0
"""Seconds a request may take."""

CONNECTIONS_KEPT = 8
"""Keep-alive connections held for a client shared by threads."""

IDLE_REUSE = 2.0
"""Seconds a kept connection may idle and still be reused. Servers close idle connections
(`assocmem serve` after 5 s, uvicorn's default); a request sent on one as it closes is lost
with no answer, so the client drops them first, as httpx does."""

_RETRIES = urllib3.Retry(total=2, redirect=0, status=0, raise_on_status=False)
"""A refused connection is tried again; a request that was sent is tried again only when
its method is idempotent: urllib3 never repeats a POST whose answer was lost."""
_READ_RETRIES = _RETRIES.new(allowed_methods=None)
"""Reads and chains are POSTs that change nothing: safe to send again."""
_KEYED_RETRIES = urllib3.Retry(
    total=4,
    redirect=0,
    status=3,
    status_forcelist=(502, 503, 504),
    allowed_methods=None,
    backoff_factor=0.2,
    respect_retry_after_header=True,
    raise_on_status=False,
)
"""An append whose every event carries an idempotency key is sent again when its answer was
lost or the service was briefly away (502-504): the log stores it once whatever happens."""


REBUILD_WAIT = 1800.0
"""Seconds a read of a rebuilt state is asked again while the service is rebuilding it."""

SCOPES = ("user", "session", "namespace")


def answer_of(content: bytes, media: str) -> Any:
    """A JSON answer; JSON lines (an export) as the list of their objects."""
    if media.startswith("application/x-ndjson"):
        return [orjson.loads(line) for line in content.splitlines() if line.strip()]
    return orjson.loads(content)


def scope_headers(scope: dict[str, str]) -> dict[str, str]:
    unknown = set(scope) - set(SCOPES)
    if unknown:
        raise ValueError(f"scope {sorted(unknown)} is unknown: expected any of {', '.join(SCOPES)}")
    return {f"x-assocmem-{name}": value for name, value in scope.items() if value}


def degraded(empty: dict[str, Any], failure: ApiError) -> dict[str, Any]:
    """The empty answer of a degraded read for an outage; a wrong request still raises."""
    if isinstance(failure, BadRequest) and failure.status != 429:
        raise failure
    return {**empty, "degraded": True, "reason": str(failure)}


def latest_written(current: str | None, answer: dict[str, Any]) -> str | None:
    """The latest of `current` and the positions a write's answer names (`current` on a
    tie). Each parsed once: a large batch's positions are many."""
    positions = [current, answer.get("position"), *answer.get("positions", [])]
    positions += [item.get("position") for item in answer.get("items", [])]
    named = list(filter(None, positions))
    return max(named, key=Position.parse) if named else None


class Client(Calls[dict[str, Any]]):
    """The blocking client: every call of `Calls`, each answered as a dict."""

    def __init__(
        self,
        url: str | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        api_key: str | None = None,
        degrade_after: float | None = None,
        scope: dict[str, str] | None = None,
    ) -> None:
        """`url` and `api_key` (`assocmem keys create` makes one): by default ASSOCMEM_URL and
        ASSOCMEM_API_KEY, else the `assocmem up` running here (ASSOCMEM_HOME, `.assocmem`
        by default: its URL and operator key), as the CLI finds it (api/client/local.py).

        `scope`: whom the requests are about, recorded on every event they append: any of
        `user`, `session`, `namespace` (sent as X-Assocmem-User, -Session, -Namespace).

        `degrade_after`: seconds a read or a chain may take; when the service is down, slow,
        failing (5xx) or refusing for rate (429), they return an empty answer flagged
        `"degraded": true` (with the `reason`) within that time instead of raising, so a
        memory outage never fails an agent's run. Off by default; the MCP tools use it."""
        url, api_key = where(url, api_key)
        self.url = url.rstrip("/")
        parts = urllib.parse.urlsplit(self.url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(
                f"{url!r} is not an http(s) URL such as http://127.0.0.1:8765 (the default of assocmem up)"
            )
        self._prefix = parts.path
        self._timeout = timeout
        self.api_key = api_key
        self._auth = {"authorization": f"Bearer {api_key}"} if api_key else {}
        self._auth |= scope_headers(scope or {})
        pool = _FreshHTTPSPool if parts.scheme == "https" else _FreshPool
        self._http = pool(
            parts.hostname,
            parts.port,
            maxsize=CONNECTIONS_KEPT,
            timeout=urllib3.Timeout(connect=min(timeout, 5.0), read=timeout),
            retries=_RETRIES,
        )
        self._degrade_after = degrade_after
        self.position: str | None = None
        """The latest position this client's writes returned; its reads and chains wait for it."""
        self.on_wait: Callable[[ApiError], None] | None = None
        """Told each time a read of a rebuilt state (`as_of`, `without_feedback`) is to be
        asked again, with the service's answer: how far the rebuild has come (the CLI
        prints it)."""

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._http.close()

    def _send(self, call: Call) -> dict[str, Any]:
        if call.empty is not None and self._degrade_after is not None:
            answer = self._degradable(call, call.empty)
        elif call.rebuilt:
            answer = self._rebuilt(call)
        else:
            answer = self._call(call)
        return answer[call.pick] if call.pick else answer  # type: ignore[no-any-return]

    def _degradable(self, call: Call, empty: dict[str, Any]) -> dict[str, Any]:
        """A read or a chain in degraded mode: bounded by `degrade_after` and never raising
        for an outage (a request the API refuses as invalid still raises BadRequest)."""
        bounded = urllib3.Timeout(total=self._degrade_after)
        try:
            answer = self._call(call, timeout=bounded, retries=False)
        except ApiError as exc:
            return degraded(empty, exc)
        return {**answer, "degraded": False}

    def _rebuilt(self, call: Call) -> dict[str, Any]:
        """A read of a rebuilt state (`as_of`, `without_feedback`): asked again while the
        service says it is still rebuilding it (a 503 `read_timeout`: at a million events a
        rebuild takes a minute or two, the service answers within ASSOCMEM_READ_TIMEOUT),
        for at most REBUILD_WAIT seconds."""
        deadline = time.monotonic() + REBUILD_WAIT
        while True:
            try:
                return self._call(call)
            except ApiError as exc:
                pause = rebuild_pause(exc, deadline)
                if self.on_wait is not None:
                    self.on_wait(exc)
                time.sleep(pause)

    def _call(
        self,
        call: Call,
        timeout: urllib3.Timeout | None = None,
        retries: urllib3.Retry | bool | None = None,
    ) -> dict[str, Any]:
        """`timeout`, `retries`: this request's, in place of the client's."""
        method, path, params, json = call.method, call.path, call.params, call.body
        safe = call.changes_nothing or method == "GET"
        if retries is None:
            retries = _KEYED_RETRIES if call.keyed else _READ_RETRIES if safe else _RETRIES
        url = self._prefix + path
        if params:
            url += "?" + _query(params)
        body, headers = None, dict(self._auth)
        if json is not None:  # orjson both ways: a read's answer is tens of KB of JSON
            body = orjson.dumps(json)
            headers["content-type"] = "application/json"
        try:
            response = self._http.urlopen(
                method,
                url,
                body=body,
                headers=headers,
                retries=retries,
                timeout=timeout if timeout is not None else self._http.timeout,
            )
        except urllib3.exceptions.HTTPError as exc:
            reason = exc.reason if isinstance(exc, urllib3.exceptions.MaxRetryError) else exc
            timed_out = isinstance(reason, urllib3.exceptions.TimeoutError)
            if timed_out and not isinstance(reason, urllib3.exceptions.NewConnectionError):
                took = timeout.total if timeout is not None else self._timeout
                message = f"assocmem at {self.url} did not answer within {took:g} s"
            else:
                message = f"assocmem is not reachable at {self.url}: {reason}"
            raise ServiceDown(message) from exc
        if response.status >= 400:
            raise error_for(
                response.status,
                problem_detail(response.data, response.status),
                problem_code(response.data),
                retry_after_seconds(response.headers.get("Retry-After")),
            )
        answer = answer_of(response.data, response.headers.get("content-type", ""))
        if method in WRITES and not call.changes_nothing:
            self.position = latest_written(self.position, answer)
        return answer  # type: ignore[no-any-return]


class _FreshPool(urllib3.HTTPConnectionPool):
    """Reconnects instead of reusing a connection idle for more than IDLE_REUSE seconds."""

    def _put_conn(self, conn: HTTPConnection | None) -> None:
        if conn is not None:
            conn.idle_since = time.monotonic()  # type: ignore[attr-defined]
        super()._put_conn(conn)

    def _get_conn(self, timeout: float | None = None) -> HTTPConnection:
        conn = super()._get_conn(timeout)
        idle_since = getattr(conn, "idle_since", None)
        if idle_since is not None and time.monotonic() - idle_since > IDLE_REUSE:
            conn.close()  # urllib3 connects a closed connection again on its next request
        return conn


class _FreshHTTPSPool(_FreshPool, urllib3.HTTPSConnectionPool):
    pass


def _query(params: dict[str, Any]) -> str:
    """Lists as repeated keys (concepts=a&concepts=b), booleans as true/false."""
    pairs = []
    for key, value in params.items():
        for item in value if isinstance(value, list | tuple) else [value]:
            text = str(item).lower() if isinstance(item, bool) else str(item)
            pairs.append((key, text))
    return urllib.parse.urlencode(pairs)


def rebuild_pause(error: ApiError, deadline: float) -> float:
    """Seconds to wait before asking a rebuilt read again; raises `error` unless it says
    the rebuild goes on (`read_timeout`) and `deadline` (monotonic) is not past."""
    if error.code != READ_TIMED_OUT or time.monotonic() > deadline:
        raise error
    return min(error.retry_after or 1.0, 10.0)


def problem_code(data: bytes) -> str | None:
    try:
        code = orjson.loads(data).get("code")
    except (orjson.JSONDecodeError, AttributeError):
        return None
    return code if isinstance(code, str) else None


def retry_after_seconds(header: str | None) -> float | None:
    try:
        return float(header) if header is not None else None
    except ValueError:
        return None  # an HTTP date: ours are always seconds


def problem_detail(data: bytes, status: int) -> str:
    text = data.decode("utf-8", "replace")
    try:
        return str(orjson.loads(data).get("detail", text))
    except (orjson.JSONDecodeError, AttributeError):
        return text or f"HTTP {status}"
