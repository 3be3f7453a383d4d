"""Python client of the HTTP API (httpx), used by the CLI."""

from __future__ import annotations

from typing import Any

import httpx
import orjson

from .errors import ApiError, BadRequest, ServiceDown

DEFAULT_TIMEOUT = 30.0
"""Seconds a request may take."""


class Client:
    def __init__(self, url: str, timeout: float = DEFAULT_TIMEOUT) -> None:
        self.url = url.rstrip("/")
        self._http = httpx.Client(base_url=self.url, timeout=timeout)

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._http.close()

    def write(
        self,
        text: str,
        concepts: list[str] | None = None,
        importance: int = 3,
        ts: float | None = None,
        key: str | None = None,
        supersedes: list[str] | None = None,
    ) -> dict[str, Any]:
        body = {"text": text, "concepts": concepts, "importance": importance, "ts": ts, "key": key}
        if supersedes:
            body["supersedes"] = supersedes
        return self._call("POST", "/v1/memories", json=body)

    def write_many(self, items: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return self._call("POST", "/v1/memories/batch", json={"items": items})["items"]  # type: ignore[no-any-return]

    def read(
        self, text: str | None = None, concepts: list[str] | None = None, **options: Any
    ) -> dict[str, Any]:
        """Recall; `options` are the fields of ReadIn (depth, limit, time, token_budget, ...)."""
        body = {"text": text, "concepts": concepts} | _given(options)
        return self._call("POST", "/v1/read", json=body)

    def find_chain(
        self, concepts: list[str] | None = None, text: str | None = None, floor: float | None = None
    ) -> dict[str, Any]:
        body = {"concepts": concepts, "text": text} | _given({"floor": floor})
        return self._call("POST", "/v1/chain", json=body)

    def set_importance(self, memory_id: str, importance: int) -> dict[str, Any]:
        return self._call(
            "POST", f"/v1/memories/{memory_id}/importance", json={"importance": importance}
        )

    def log_activity(self, text: str, **fields: Any) -> dict[str, Any]:
        """`fields`: category, tags, source, importance, ts, key."""
        return self._call("POST", "/v1/activities", json={"text": text} | _given(fields))

    def activities(self, **filters: Any) -> dict[str, Any]:
        """`filters`: date, when, start, end, category, keyword, source, limit, tz."""
        return self._call("GET", "/v1/activities", params=_given(filters))

    def activity_summary(self, period: str = "day", **filters: Any) -> dict[str, Any]:
        """`filters`: when, start, end, category, tz."""
        params = {"period": period} | _given(filters)
        return self._call("GET", "/v1/activities/summary", params=params)

    def ingest(
        self,
        title: str,
        text: str,
        scope: str = "sentence",
        source: str | None = None,
        key: str | None = None,
    ) -> dict[str, Any]:
        body = {"title": title, "text": text, "scope": scope, "source": source, "key": key}
        return self._call("POST", "/v1/documents", json=body)

    def feedback(
        self,
        ids: list[str],
        outcome: float,
        concepts: list[str] | None = None,
        text: str | None = None,
        key: str | None = None,
    ) -> dict[str, Any]:
        body = {"ids": ids, "outcome": outcome, "concepts": concepts, "text": text, "key": key}
        return self._call("POST", "/v1/feedback", json=body)

    def graph(self, concepts: list[str], depth: int = 1) -> dict[str, Any]:
        return self._call("GET", "/v1/graph", params={"concepts": concepts, "depth": depth})

    def state(self, as_of: str | None = None, without_feedback: bool = False) -> dict[str, Any]:
        params: dict[str, Any] = {"without_feedback": without_feedback}
        if as_of:
            params["as_of"] = as_of
        return self._call("GET", "/v1/state", params=params)

    def health(self) -> dict[str, Any]:
        return self._call("GET", "/v1/health")

    def _call(self, method: str, path: str, json: Any = None, **kwargs: Any) -> dict[str, Any]:
        if json is not None:  # orjson both ways: a read's answer is tens of KB of JSON
            kwargs["content"] = orjson.dumps(json)
            kwargs["headers"] = {"content-type": "application/json"}
        try:
            response = self._http.request(method, path, **kwargs)
        except httpx.TransportError as exc:
            raise ServiceDown(f"assocmem is not reachable at {self.url}: {exc}") from exc
        if response.status_code >= 400:
            detail = _detail(response)
            if response.status_code < 500:
                raise BadRequest(detail, response.status_code)
            raise ApiError(detail, response.status_code)
        return orjson.loads(response.content)  # type: ignore[no-any-return]


def _given(values: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in values.items() if v is not None}


def _detail(response: httpx.Response) -> str:
    try:
        return str(response.json().get("detail", response.text))
    except ValueError:
        return response.text or f"HTTP {response.status_code}"
