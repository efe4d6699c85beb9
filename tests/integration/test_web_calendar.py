"""Issue 46, item 6: the web client's challenge calendar in a real headless Chromium against the real server (on the
embedded Redis): the commitments the API publishes, a closed day's proof verified by the browser itself
(``crypto.subtle``), a tampered answer shown as a mismatch, reached by keyboard, axe-core clean in both languages."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import date, timedelta
from typing import Any

import httpx
from playwright.sync_api import expect

from pyramide.service.app import create_app
from pyramide.service.infra.clock import FakeClock, utc_now
from pyramide.service.infra.settings import Settings
from tests.support.clock import browser_clock, past_the_close
from tests.support.serving import serve_in_thread
from tests.support.waiting import eventually, run_job
from tests.support.web_page import _axe, _page, _shot

SPAN = 7
"""The page shows a week back to a week ahead."""


@contextmanager
def _past_tomorrows_close(settings: Settings, clock: FakeClock) -> Iterator[tuple[str, str, date]]:
    """A real server that chose the coming week ahead (bounded wait), then its clock (kept clear of midnight while it
    chose) moved past tomorrow's close: the service's URL, tomorrow's N id, and the day it started on."""
    app = create_app(settings.but(challenges={"days_ahead": SPAN}), clock=clock)
    with serve_in_thread(app) as url, httpx.Client(base_url=url, timeout=30) as http:
        run_job(app, "challenge choice ahead", timeout_s=120)  # the test's clock: nothing runs by itself
        eventually(
            lambda: len(http.get("/v1/challenges").json()["challenges"]) >= (SPAN + 2) * 2,
            120,
            what="the coming week chosen",
        )
        today = utc_now(clock).date()
        past_the_close(clock)
        past_the_close(clock)  # the day after tomorrow, 00:01
        yield url, f"{today + timedelta(days=1)}-N", today


def _published(url: str, page: Any) -> dict[str, dict[str, Any]]:
    """What the API publishes for the page's range (a week either side of the browser's day), by challenge id."""
    today = date.fromisoformat(page.evaluate("new Date().toISOString().slice(0, 10)"))
    query = {"from": str(today - timedelta(days=SPAN)), "to": str(today + timedelta(days=SPAN))}
    answer = httpx.get(f"{url}/v1/challenges", params=query).json()
    assert answer["next_from"] is None
    return {entry["id"]: entry for entry in answer["challenges"]}


def _open_by_keyboard(page: Any) -> None:
    for _ in range(40):  # Tab through the header to the calendar's button
        if page.evaluate("document.activeElement.id") == "open-calendar":
            break
        page.keyboard.press("Tab")
    page.keyboard.press("Enter")
    page.wait_for_selector("#calendar-dialog[open]")


def test_the_calendar_shows_the_published_commitments_and_verifies_a_closed_day_in_the_browser(
    browser: Any, settings: Settings, clock: FakeClock
) -> None:
    with (
        _past_tomorrows_close(settings, clock) as (url, tomorrow, started),
        _page(browser, url, "en-GB", script=browser_clock(clock)) as page,
    ):
        published = _published(url, page)
        closed = published[tomorrow]
        assert closed["code"] and closed["nonce"] and not closed["open"], closed
        _open_by_keyboard(page)
        rows = page.locator("#calendar-entries tr[data-challenge]")
        expect(rows).to_have_count(len(published))
        assert {rows.nth(i).get_attribute("data-challenge") for i in range(len(published))} == set(published)
        for challenge, entry in published.items():
            line = page.locator(f'#calendar-entries tr[data-challenge="{challenge}"]')
            assert line.locator("code[data-full=commitment]").text_content() == entry["commitment"], challenge
            state = "closed" if entry["code"] else "open" if entry["open"] else "coming"
            assert line.get_attribute("data-state") == state, challenge
            if entry["code"]:
                assert line.locator("code[data-full=code]").text_content() == entry["code"]
                assert line.locator("code[data-full=nonce]").text_content() == entry["nonce"]
            else:
                assert line.locator("code[data-full=code]").count() == 0, "sealed until the close"
                assert line.locator("[data-action=verify]").count() == 0

        row = page.locator(f'#calendar-entries tr[data-challenge="{tomorrow}"]')
        verify = row.locator("[data-action=verify]")
        for _ in range(80):  # keyboard only: Tab on to tomorrow's Verify
            if verify.evaluate("(button) => button === document.activeElement"):
                break
            page.keyboard.press("Tab")
        page.keyboard.press("Enter")
        result = row.locator(".proof-result")
        expect(result).to_have_attribute("data-verified", "match")
        published_on = page.evaluate(
            "(iso) => new Date(iso).toLocaleString('en-GB', { dateStyle: 'short', timeStyle: 'short' })",
            closed["committed_at"],
        )
        expect(result).to_have_text(f"Matches the commitment published on {published_on} (checked on this device).")
        # today's was chosen after its day began (the service started today): it opens, but the page says it
        today_row = page.locator(f'#calendar-entries tr[data-challenge="{started}-N"]')
        today_row.locator("[data-action=verify]").click()
        expect(today_row.locator(".proof-result")).to_have_attribute("data-verified", "late")
        expect(today_row.locator(".proof-result")).to_contain_text("only after the day had begun")
        _axe(page, "calendar-dialog")
        _shot(page, "calendar-en")
        page.keyboard.press("Escape")
        page.select_option("#language", "hu")
        page.click("#open-calendar")
        expect(page.locator("#calendar-dialog caption")).to_have_text(
            "Napi kihívások egy héttel előbbtől egy héttel későbbig"
        )
        row.locator("[data-action=verify]").click()
        expect(row.locator(".proof-result")).to_contain_text("Egyezik")
        _axe(page, "calendar-dialog")
        _shot(page, "calendar-hu")

        row.locator("[data-action=play-deal]").click()
        expect(page.locator("#calendar-dialog")).not_to_have_attribute("open", "")
        expect(page.locator("#code")).to_have_text(closed["code"], timeout=10000)
        expect(page.locator("#moves")).to_have_text("0")

        opened = next(e for e in published.values() if e["open"] and e["id"].endswith("-N"))
        page.click("#open-calendar")
        page.locator(f'#calendar-entries tr[data-challenge="{opened["id"]}"] [data-action=play-today]').click()
        page.wait_for_selector("#challenge-dialog[open]")
        expect(page.locator("#challenge-info")).to_contain_text(opened["id"])


def test_a_tampered_nonce_shows_a_mismatch(browser: Any, settings: Settings, clock: FakeClock) -> None:
    """The calendar's answer is intercepted on loopback and one closed day's nonce changed: the browser's own hash
    no longer opens the commitment, and the page says so (a page that took the server's word would not notice)."""
    with (
        _past_tomorrows_close(settings, clock) as (url, tomorrow, _),
        _page(browser, url, "hu-HU", script=browser_clock(clock)) as page,
    ):

        def tamper(route: Any) -> None:
            response = route.fetch()
            body = response.json()
            for entry in body["challenges"]:
                if entry["id"] == tomorrow:
                    entry["nonce"] = entry["nonce"][:-1] + ("0" if entry["nonce"][-1] != "0" else "1")
            route.fulfill(response=response, json=body)

        page.route(lambda address: address.startswith(f"{url}/v1/challenges?"), tamper)
        page.click("#open-calendar")
        row = page.locator(f'#calendar-entries tr[data-challenge="{tomorrow}"]')
        row.locator("[data-action=verify]").click()
        result = row.locator(".proof-result")
        expect(result).to_have_attribute("data-verified", "mismatch")
        expect(result).to_contain_text("NEM egyezik")
        expect(page.locator("#calendar-message")).to_have_class("view-message error")
        _axe(page, "calendar-dialog")
