"""The API as a browser front end on another origin uses it, in a real headless Chromium (Debian's package, driven
by Playwright through its executable path; ``scripts/debian-tools.sh`` installs it where it can, and where it cannot
these tests fail saying what is missing): CORS and the exposed headers, and the docs page with no network."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from litestar import Litestar

from pyramide.service.app import create_app
from pyramide.service.infra.settings import Settings
from tests.support.serving import serve_in_thread
from tests.support.waiting import eventually

PAGE = """<!doctype html><html><body><pre id="out">running</pre><script type="module">
const api = "%(api)s";
const out = document.getElementById("out");
try {
  const player = await (await fetch(api + "/v1/players", {method: "POST", headers: {"Content-Type": "application/json",
    "Idempotency-Key": crypto.randomUUID()}, body: "{}"})).json();
  const auth = {"Authorization": "Bearer " + player.token, "Content-Type": "application/json", "Accept-Language": "en"};
  const dealt = await fetch(api + "/v1/games", {method: "POST", headers: auth, body: '{"code": "PY1-N-AAAAAAS"}'});
  const game = await dealt.json();
  const moved = await fetch(api + "/v1/games/" + game.id + "/moves", {method: "POST",
    headers: {...auth, "If-Match": dealt.headers.get("ETag"), "Idempotency-Key": "draw-1"}, body: '{"type": "draw"}'});
  const stale = await fetch(api + "/v1/games/" + game.id + "/moves", {method: "POST",
    headers: {...auth, "If-Match": dealt.headers.get("ETag")}, body: '{"type": "draw"}'});
  out.textContent = JSON.stringify({location: dealt.headers.get("Location"), etag: moved.headers.get("ETag"),
    language: moved.headers.get("Content-Language"), request: moved.headers.get("X-Request-ID"),
    moves: (await moved.json()).moves, stale: stale.status, title: (await stale.json()).title});
} catch (error) { out.textContent = "failed: " + error; }
</script></body></html>"""


@contextmanager
def _origin(page: dict[str, str]) -> Iterator[str]:
    """A second origin serving ``page["html"]``, as a third-party front end's host would."""

    class Page(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = page["html"].encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *_: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Page)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()


def _run_page(browser: Any, url: str) -> str:
    page = browser.new_page()
    try:
        page.goto(url)
        page.wait_for_function("document.getElementById('out').textContent !== 'running'", timeout=20000)
        return page.locator("#out").text_content() or ""
    finally:
        page.close()


def test_a_page_on_another_origin_plays_through_cors(browser: Any, settings: Settings) -> None:
    page: dict[str, str] = {}
    with _origin(page) as origin:
        app = create_app(settings.but(http={"cors_origins": (origin,)}))
        with serve_in_thread(app) as api:
            page["html"] = PAGE % {"api": api}
            result = _run_page(browser, origin)
    assert result.startswith("{"), result
    seen = json.loads(result)
    assert seen["location"].startswith("/v1/games/") and seen["etag"] == '"1"' and seen["moves"] == 1
    assert seen["language"] == "en" and seen["request"], "the exposed headers reach the page"
    assert seen["stale"] == 412 and seen["title"] == "The game has changed meanwhile"


def test_a_page_on_an_origin_not_allowed_is_refused_by_the_browser(browser: Any, app: Litestar) -> None:
    page: dict[str, str] = {}
    with serve_in_thread(app) as api, _origin(page) as origin:
        page["html"] = PAGE % {"api": api}
        assert _run_page(browser, origin).startswith("failed"), "without CORS for this origin, the browser blocks it"


def test_the_api_docs_page_works_with_no_network(browser: Any, app: Litestar) -> None:
    with serve_in_thread(app) as api:
        page = browser.new_page()
        outside: list[str] = []

        def only_the_service(route: Any) -> None:
            if route.request.url.startswith(api):
                route.continue_()
            else:
                outside.append(route.request.url)
                route.abort()

        page.route("**/*", only_the_service)
        page.goto(f"{api}/schema")
        page.wait_for_selector(".opblock", timeout=20000)  # Swagger UI drew the operations from the document
        assert page.locator(".opblock").count() >= 20
        assert page.get_by_text("/v1/games/{game_id}/moves", exact=True).count() >= 1
        assert outside == [], outside
        page.close()


WATCH_POLICY = """window.__violations = [];
document.addEventListener("securitypolicyviolation", (e) => window.__violations.push(
  e.violatedDirective + " " + (e.blockedURI || "inline") + " " + e.sourceFile + ":" + e.lineNumber));"""
"""Run before the page's own scripts: every Content-Security-Policy violation the page meets, as the DOM reports it."""


def _until(page: Any, expression: str, seconds: float = 20) -> None:
    """Poll ``expression`` from outside the page (``wait_for_function`` evaluates a string in the page, which the
    policy rightly refuses)."""
    eventually(lambda: page.evaluate(expression), seconds, what=expression)


def test_the_docs_and_play_pages_work_under_their_policy(browser: Any, app: Litestar) -> None:
    """Finding: ``/schema`` sent no Content-Security-Policy (it inlined its script and the whole document). Under
    the policy both pages still draw and call the API, and the browser reports no violation, on the page or in
    the console."""
    with serve_in_thread(app) as api:
        page = browser.new_page()
        page.add_init_script(WATCH_POLICY)
        console: list[str] = []
        page.on("console", lambda message: console.append(message.text))
        try:
            served = page.goto(f"{api}/schema")
            assert served is not None and "default-src 'self'" in served.headers["content-security-policy"]
            drawn = "document.querySelectorAll('.opblock').length >= 20"  # Swagger UI fetched the document, drew it
            _until(page, f"window.__violations.length > 0 || {drawn}")
            assert page.evaluate("window.__violations") == []
            assert page.evaluate(drawn)
            served = page.goto(f"{api}/play/")
            assert served is not None and "default-src 'self'" in served.headers["content-security-policy"]
            ready = "document.body.dataset.ready === 'true' && document.querySelector('[data-card]') !== null"
            _until(page, f"window.__violations.length > 0 || ({ready})")
            assert page.evaluate("window.__violations") == []
            assert page.evaluate(ready)  # the client dealt a game through the API and drew its cards
        finally:
            page.close()
    assert [m for m in console if "Content Security Policy" in m or "Content-Security-Policy" in m] == []
