"""What the browser tests of the web client's views share: a fresh profile on the play page that lets no request
leave the service, a read the test holds back, the page's player as a bearer header, axe-core on an open view, and
screenshots into docs/web/."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
AXE = ROOT / "tools" / "node" / "node_modules" / "axe-core" / "axe.min.js"


@contextmanager
def _page(
    browser: Any, api: str, language: str, requests: list[str] | None = None, script: str | None = None
) -> Iterator[Any]:
    """A fresh profile on the play page, ready; any request off the service is aborted and fails the test.
    ``requests``: gets every request the page sends from its first, as ``METHOD path?query``; ``script``: runs in
    the page before any of its own (an init script)."""
    profile = browser.new_context(
        locale=language, viewport={"width": 1280, "height": 800}, accept_downloads=True, bypass_csp=True
    )  # bypass_csp: only so that axe-core can be injected
    page = profile.new_page()
    outside: list[str] = []

    def only(route: Any) -> None:
        if route.request.url.startswith(api):
            route.continue_()
        else:
            outside.append(route.request.url)
            route.abort()

    page.route("**/*", only)
    if requests is not None:
        page.on("request", lambda request: requests.append(f"{request.method} {request.url.split('/', 3)[3]}"))
    if script is not None:
        page.add_init_script(script)
    try:
        page.goto(f"{api}/play/")
        page.wait_for_selector("body[data-ready=true]", timeout=20000)
        yield page
        assert outside == [], outside
    finally:
        profile.close()


HOLD_READ = """(() => {
  const hold = (window.heldRead = { armed: ARMED, answered: false, received: false, release: null });
  const real = window.fetch;
  window.fetch = (input, init = {}) => {
    const url = new URL(input instanceof Request ? input.url : String(input), location.href);
    if (!hold.armed || (init.method || "GET") !== "GET" || url.pathname !== PATH) return real(input, init);
    hold.armed = false;
    const answer = real(input, init).then((response) => {
      hold.answered = true;
      const json = response.json.bind(response);
      response.json = async () => {
        const data = await json();
        setTimeout(() => (hold.received = true)); // after the page's own continuations have run
        return data;
      };
      return response;
    });
    return new Promise((resolve, reject) => (hold.release = () => answer.then(resolve, reject)));
  };
})();"""


def hold_read(path: str, *, first: bool = False) -> str:
    """An init script for :func:`_page`: once the test sets ``heldRead.armed`` (from the page's first request on when
    ``first``), the page's next GET of ``path`` is sent at once, but its answer reaches the page only when the test
    calls ``heldRead.release()``. ``heldRead.answered`` tells that the server's answer is in, ``heldRead.received``
    that the page has taken it in."""
    return HOLD_READ.replace("ARMED", json.dumps(first)).replace("PATH", json.dumps(path))


def _token(page: Any, api: str) -> dict[str, str]:
    """The page's player, as a bearer header (the page keeps its token in localStorage)."""
    token = page.evaluate(f"localStorage.getItem('pyramide:{api}:token')")
    assert token
    return {"Authorization": f"Bearer {token}"}


def _axe(page: Any, dialog: str) -> None:
    """axe-core on the open view (the page behind a modal dialog is inert): no violation of any impact."""
    if not page.evaluate("typeof axe !== 'undefined'"):
        page.add_script_tag(path=str(AXE))
    passes, found = page.evaluate(
        "async (selector) => { const r = await axe.run(document.querySelector(selector));"
        " return [r.passes.length, r.violations.map(v => `${v.impact} ${v.id}: ${v.nodes.map(n => n.target)}`)]; }",
        f"#{dialog}",
    )
    assert found == [] and passes > 5, (passes, found)


def _shot(page: Any, name: str) -> None:
    """The view's screenshot into docs/web/ when asked (``PYRAMIDE_SCREENSHOT=1``)."""
    if os.environ.get("PYRAMIDE_SCREENSHOT") == "1":
        (ROOT / "docs" / "web").mkdir(exist_ok=True)
        page.screenshot(path=str(ROOT / "docs" / "web" / f"{name}.png"))
