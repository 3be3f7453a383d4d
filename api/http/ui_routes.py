"""The read-only web page at /ui: one HTML shell for every address under it, and its script
and style, all in the package (no CDN: it works offline). The shell holds no data and
needs no key; the page asks the API with the key the person gives it, as every client
does, and keeps it for the tab only (sessionStorage). `assocmem ui` hands the key over
in the address's fragment, which a browser never sends to a server."""

from __future__ import annotations

from importlib import resources

from fastapi import FastAPI
from fastapi.responses import HTMLResponse, Response

ASSETS = {
    "app.js": "text/javascript; charset=utf-8",
    "style.css": "text/css; charset=utf-8",
}
SECURITY = {
    # its own script and style only, and calls to this origin: a stored memory's text can
    # never run as script on the page
    "Content-Security-Policy": "default-src 'none'; script-src 'self'; style-src 'self';"
    " img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'self';"
    " frame-ancestors 'none'",
    "Referrer-Policy": "no-referrer",
    "X-Content-Type-Options": "nosniff",
}


def _read(name: str) -> bytes:
    return resources.files("assocmem.api.http").joinpath("ui", name).read_bytes()


def install(app: FastAPI, version: str) -> None:
    """Serve the page; assets carry `version` in their address, so a browser may keep them."""
    shell = _read("index.html").replace(b"{{version}}", version.encode())
    assets = {name: _read(name) for name in ASSETS}

    async def page() -> HTMLResponse:
        return HTMLResponse(shell, headers={**SECURITY, "Cache-Control": "no-cache"})

    async def page_at(rest: str) -> HTMLResponse:  # the script reads the address itself
        return await page()

    async def asset(version: str, name: str) -> Response:
        if name not in assets:
            return Response(status_code=404)
        cache = {"Cache-Control": "public, max-age=31536000, immutable"}
        return Response(assets[name], media_type=ASSETS[name], headers={**SECURITY, **cache})

    app.add_api_route("/ui/assets/{version}/{name}", asset, include_in_schema=False)
    app.add_api_route("/ui", page, include_in_schema=False)
    app.add_api_route("/ui/{rest:path}", page_at, include_in_schema=False)
