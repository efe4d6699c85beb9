"""The web client at ``/play`` in a real headless Chromium: a person's game by clicks and keys, in both languages,
at phone and desktop size, from the service's origin and from another one through CORS, with no outside request."""

from __future__ import annotations

import functools
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest
from litestar import Litestar
from playwright.sync_api import expect

from pyramide.service.app import create_app
from pyramide.service.http.web import WEB_DIR
from pyramide.service.infra.settings import Settings
from tests.support.serving import serve_in_thread
from tests.support.web_client import (
    DEAL,
    _card,
    _deal_code,
    _feedback,
    _page,
    _ready,
    _stuck_after_drawing_everything,
)

ROOT = Path(__file__).resolve().parents[2]


@contextmanager
def _static_origin() -> Iterator[str]:
    """``web/`` served by a plain static file server on another port: a third party hosting the client."""

    class Quiet(SimpleHTTPRequestHandler):
        def log_message(self, *_: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(WEB_DIR)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()


def _stat(page: Any, name: str) -> str:
    page.click("#open-stats")
    page.wait_for_selector("#stats-dialog[open]")
    value = page.locator(f'[data-stat="{name}"]').text_content()
    page.keyboard.press("Escape")
    return value or ""


@pytest.mark.slow
def test_a_person_plays_a_deal_to_a_win_by_clicks_keys_and_hints(browser: Any, app: Litestar, tmp_path: Path) -> None:
    with (
        serve_in_thread(app) as api,
        _page(browser, (api,), locale="hu-HU", viewport={"width": 800, "height": 900}) as (
            page,
            outside,
        ),
    ):
        _ready(page, f"{api}/play")
        assert page.locator("#undo").text_content() == "Visszavonás", "Hungarian, from the browser's language"
        assert _stat(page, "wonGames") == "0"
        _deal_code(page, DEAL.code)
        (x, y), (a, b) = DEAL.wrong, DEAL.pair
        before = _card(page, x).bounding_box()
        _card(page, DEAL.king).click()
        expect(page.locator("#score")).to_have_text("10")
        assert _card(page, DEAL.king).count() == 0
        assert _card(page, x).bounding_box() == before, "no layout shift when a card goes"
        _card(page, a).focus()
        page.keyboard.press("Enter")
        expect(_card(page, a)).to_have_attribute("aria-pressed", "true")
        _card(page, b).focus()
        page.keyboard.press("Space")
        expect(page.locator("#score")).to_have_text("30")
        assert _card(page, b).count() == 0
        _card(page, x).click()
        expect(_card(page, x)).to_have_attribute("aria-pressed", "true")  # one tap at a time: the page drops a second
        _card(page, y).click()
        _feedback(page, "Az összegnek ennyinek kell lennie: 13")
        _card(page, DEAL.covered).click()
        _feedback(page, "Ezt a lapot egy másik lap takarja")
        page.screenshot(path=str(_screenshot_path(tmp_path)))

        page.select_option("#language", "en")
        assert page.locator("#undo").text_content() == "Undo"
        assert " of " in (_card(page, x).get_attribute("aria-label") or ""), "cards are named for screen readers"
        _card(page, x).click()
        _feedback(page, "The sum must be: 13")
        page.click("#undo")
        expect(_card(page, b)).to_have_count(1)
        assert page.locator("#score").text_content() == "10", "undo gives back the pair and its points"
        page.keyboard.press("d")
        expect(page.locator("#waste-count")).to_contain_text("2")

        for _ in range(400):
            if page.locator("#end-dialog[open]").count():
                break
            page.click("#hint")
            page.wait_for_selector(".hinted", timeout=10000)
            targets = [h.get_attribute("data-card") or "stock" for h in page.locator(".hinted").all()]
            for target in targets:
                page.click("#stock" if target == "stock" else f'[data-card="{target}"]')
                expect(page.locator(".hinted")).to_have_count(0, timeout=10000)
                expect(page.locator("#board")).to_have_attribute("aria-busy", "false")  # its answer is in
        assert page.locator("#end-title").text_content() == "Congratulations, you won!"
        page.click('#end-dialog button[value="board"]')
        expect(page.locator("#board-entries tr")).to_have_count(1)
        assert page.locator("#board-entries td").first.text_content() == "1", "the win is first on the deal's board"
        expect(page.locator("#board-note")).to_contain_text("Unverified")
        page.keyboard.press("Escape")
        assert _stat(page, "wonGames") == "1", "the statistics count the win"
        assert outside == [], outside


def test_the_daily_challenge_is_played_sealed_from_the_page(browser: Any, app: Litestar) -> None:
    with serve_in_thread(app) as api, _page(browser, (api,), locale="en-US") as (page, outside):
        _ready(page, f"{api}/play/")
        page.click("#open-challenge")
        expect(page.locator("#challenge-info")).to_contain_text("Today's challenge")
        page.click("#challenge-start")
        expect(page.locator("#code")).to_contain_text("sealed until the close")
        assert page.locator("#hint").is_disabled() and page.locator("#copy-code").is_disabled()
        page.keyboard.press("d")
        expect(page.locator("#moves")).to_have_text("1")
        page.click("#open-challenge")
        expect(page.locator("#challenge-you")).to_have_text("in progress")
        expect(page.locator("#challenge-start")).to_have_text("Continue")
        page.click('#challenge-dialog button[value="board"]')
        expect(page.locator("#board-note")).to_contain_text("Verified")
        assert outside == []


def test_a_dead_end_shows_its_dialog_in_both_languages(browser: Any, app: Litestar) -> None:
    code = _stuck_after_drawing_everything()
    with serve_in_thread(app) as api, _page(browser, (api,), locale="en-GB") as (page, outside):
        _ready(page, f"{api}/play/")
        _deal_code(page, code)
        page.select_option("#language", "hu")
        for _ in range(23):
            page.keyboard.press("d")
            expect(page.locator("#board")).to_have_attribute("aria-busy", "false")
        page.wait_for_selector("#end-dialog[open]", timeout=10000)
        assert page.locator("#end-title").text_content() == "Nincs több lehetséges lépés"
        assert outside == []


def test_the_page_fits_a_phone_and_plays_from_another_origin(browser: Any, settings: Settings) -> None:
    with _static_origin() as origin:
        app = create_app(settings.but(http={"cors_origins": (origin,)}))
        with (
            serve_in_thread(app) as api,
            _page(browser, (api, origin), viewport={"width": 360, "height": 740}) as (
                page,
                outside,
            ),
        ):
            _ready(page, f"{origin}/index.html?api={api}")
            assert page.evaluate("document.documentElement.scrollWidth") <= 360, "no sideways scrolling at 360 px"
            boxes = [c.bounding_box() for c in page.locator(".pyramid .card").all()]
            assert len(boxes) == 28 and all(b["x"] >= 0 and b["x"] + b["width"] <= 360 for b in boxes)
            moves = page.locator("#moves").text_content()
            page.click("#stock")
            expect(page.locator("#moves")).not_to_have_text(moves or "")
            assert outside == []


def test_the_play_page_is_served_with_a_strict_policy(app: Litestar) -> None:
    with serve_in_thread(app) as api:
        moved = httpx.get(f"{api}/play")
        assert moved.status_code == 308 and moved.headers["location"] == "/play/"
        page = httpx.get(f"{api}/play/")
        assert page.status_code == 200 and "default-src 'self'" in page.headers["content-security-policy"]
        assert httpx.get(f"{api}/play/app.js").headers["content-type"].startswith("text/javascript")
        assert httpx.get(f"{api}/play/..%2Fpyproject.toml").status_code == 404
        assert httpx.get(f"{api}/play/nothing.js").json()["code"] == "not_found"
    for path in WEB_DIR.iterdir():
        text = path.read_text(encoding="utf-8") if path.suffix in (".html", ".js", ".css") else ""
        assert "http://" not in text and "https://" not in text, f"{path.name} names an outside URL"


def _screenshot_path(scratch: Path) -> Path:
    """``docs/play.png`` when asked to refresh it (``PYRAMIDE_SCREENSHOT=1``), else a file in the test's own
    ``scratch`` folder (never a shared name: tests run in parallel, and several runs on one machine)."""
    if os.environ.get("PYRAMIDE_SCREENSHOT") == "1":
        return ROOT / "docs" / "play.png"
    return scratch / "play.png"
