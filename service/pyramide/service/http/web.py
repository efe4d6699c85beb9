"""The web client (``web/`` at the top of the repository, packaged as ``pyramide/web`` in the wheel) at ``/play``:
static files, no build step, served only from a fixed list so that no path reaches anything else. It talks to the
API like any third-party front end; its Content-Security-Policy lets it load and call nothing but this origin."""

from __future__ import annotations

from pathlib import Path
from typing import Final

from litestar import Response, get
from litestar.exceptions import NotFoundException
from litestar.params import FromPath
from litestar.response import File, Redirect

import pyramide
from pyramide.service.http.body import AnyRequest
from pyramide.service.http.openapi import PAGE_SECURITY_HEADERS

MEDIA_TYPES: Final = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".png": "image/png",
    ".svg": "image/svg+xml",
    ".json": "application/json",
}
SECURITY_HEADERS: Final = {**PAGE_SECURITY_HEADERS, "Cache-Control": "no-cache"}


def web_dir() -> Path:
    """Where the client's files are: inside the installed package, else the source tree's ``web/``."""
    package = Path(pyramide.__file__).resolve().parent
    for candidate in (package / "web", package.parents[1] / "web"):
        if (candidate / "index.html").is_file():
            return candidate
    return package / "web"


WEB_DIR: Final = web_dir()
FILES: Final = (
    {p.name: MEDIA_TYPES[p.suffix] for p in WEB_DIR.iterdir() if p.suffix in MEDIA_TYPES} if WEB_DIR.is_dir() else {}
)


def _file(name: str) -> File:
    if name not in FILES:
        raise NotFoundException()
    return File(WEB_DIR / name, media_type=FILES[name], content_disposition_type="inline", headers=SECURITY_HEADERS)


@get("/play", include_in_schema=False, exclude_from_auth=True)
async def play_page(request: AnyRequest) -> Response[object] | File:
    """The page itself, at ``/play/`` (relative links: the same files work from any other origin and path)."""
    if not request.scope.get("raw_path", b"/").endswith(b"/"):  # Litestar's own path has lost the slash
        return Redirect("/play/", status_code=308, headers=SECURITY_HEADERS)
    return _file("index.html")


@get("/play/{name:str}", include_in_schema=False, exclude_from_auth=True)
async def play_file(name: FromPath[str]) -> File:
    """One of the client's files; 404 for any other name."""
    return _file(name)
