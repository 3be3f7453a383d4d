"""The web page's files as the API serves them (the page itself is driven in a browser in
tests/e2e/test_web_ui.py): one shell for every address under /ui, with no key and no
data, its script and style kept by browsers, and nothing else allowed to run."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient

from assocmem.api.http.app import create_app
from assocmem.workers.runtime.services import Runtime
from assocmem.workers.runtime.settings import Settings


@pytest.fixture
def http(settings: Settings, runtime: Runtime) -> Iterator[TestClient]:
    with TestClient(create_app(settings, runtime)) as client:
        yield client


@pytest.mark.parametrize(
    "address",
    ["/ui", "/ui/", "/ui/search?q=billing", "/ui/memories/1-0", "/ui/links/a/b", "/ui/nowhere"],
)
def test_every_address_under_ui_is_the_page_without_a_key(http: TestClient, address: str) -> None:
    page = http.get(address)
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    assert '<script src="/ui/assets/0.1.0/app.js" defer></script>' in page.text
    policy = page.headers["content-security-policy"]
    assert "script-src 'self'" in policy and "unsafe-inline" not in policy
    assert page.headers["referrer-policy"] == "no-referrer"  # the fragment's key stays here


def test_the_script_and_style_are_served_versioned_and_nothing_else(http: TestClient) -> None:
    script = http.get("/ui/assets/0.1.0/app.js")
    assert script.status_code == 200 and "javascript" in script.headers["content-type"]
    assert "immutable" in script.headers["cache-control"]
    assert "sessionStorage" in script.text and "innerHTML" not in script.text
    assert http.get("/ui/assets/0.1.0/style.css").headers["content-type"].startswith("text/css")
    assert http.get("/ui/assets/0.1.0/secrets.txt").status_code == 404
    climbed = http.get("/ui/assets/0.1.0/..%2F..%2Fapp.py")  # the page, or a 404: no file
    assert "import" not in climbed.text and "text/x-python" not in climbed.headers["content-type"]


def test_the_page_is_not_part_of_the_api_document(http: TestClient) -> None:
    paths = http.get("/openapi.json").json()["paths"]
    assert not [p for p in paths if p.startswith("/ui")]
