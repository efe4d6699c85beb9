"""The web client (``web/`` at the top of the repository, packaged as ``pyramide/web`` in the wheel) at ``/play``:
static files, no build step, served only from a fixed list so that no path reaches anything else. It talks to the
API like any third-party front end; its Content-Security-Policy lets it load and call nothing but this origin."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Final

from litestar import Response, get
from litestar.exceptions import NotFoundException
from litestar.params import FromPath
from litestar.response import Redirect

import pyramide
from pyramide.service.http.body import AnyRequest
from pyramide.service.http.docs_page import PAGE_SECURITY_HEADERS
from pyramide.service.http.headers import if_none_match, none_match
from pyramide.service.http.responses import not_modified

MEDIA_TYPES: Final = {
    ".html": "text/html",
    ".js": "text/javascript",
    ".css": "text/css",
    ".png": "image/png",
    ".svg": "image/svg+xml",
    ".json": "application/json",
}
"""Each served suffix's media type, without a charset: the response adds ``; charset=utf-8`` to ``text/`` types
itself (naming it here too sent it twice, issue 45)."""
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


def _file(request: AnyRequest, name: str) -> Response[bytes]:
    """One listed file's bytes, read as asked (a few kilobytes each), with a strong ETag that hashes them and 304
    when ``If-None-Match`` names it (``Cache-Control: no-cache`` makes the browser ask each time). A plain response,
    not a ``File``: a page shown in the browser is no download, so no ``Content-Disposition`` (a ``File`` sends one,
    with ``filename=""``)."""
    if name not in FILES:
        raise NotFoundException()
    body = (WEB_DIR / name).read_bytes()
    etag = f'"{hashlib.blake2b(body, digest_size=16).hexdigest()}"'
    if not none_match(if_none_match(request), etag):
        return not_modified(etag, SECURITY_HEADERS)
    return Response(body, media_type=FILES[name], headers={**SECURITY_HEADERS, "ETag": etag})


@get("/", include_in_schema=False, exclude_from_auth=True, status_code=302)
async def root() -> Redirect:
    """``/`` leads a person who types the bare address to the game (it answered a 404 problem, issue 45); a 302,
    not a permanent redirect, so that ``/`` may show something else one day without browsers remembering this."""
    return Redirect("/play/", status_code=302, headers=SECURITY_HEADERS)


@get("/play", include_in_schema=False, exclude_from_auth=True)
async def play_page(request: AnyRequest) -> Response[bytes] | Redirect:
    """The page itself, at ``/play/`` (relative links: the same files work from any other origin and path)."""
    if not request.scope.get("raw_path", b"/").endswith(b"/"):  # Litestar's own path has lost the slash
        return Redirect("/play/", status_code=308, headers=SECURITY_HEADERS)
    return _file(request, "index.html")


@get("/play/{name:str}", include_in_schema=False, exclude_from_auth=True)
async def play_file(request: AnyRequest, name: FromPath[str]) -> Response[bytes]:
    """One of the client's files; 404 for any other name."""
    return _file(request, name)
