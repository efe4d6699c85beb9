"""The web client in a headless Chromium: a known deal, the page opened and read, cards clicked."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from playwright.sync_api import expect

from pyramide.engine import DRAW, DealCode, Game, Status, card_code
from pyramide.engine.cards import PAIR_SUM, complement, is_king
from pyramide.engine.rules import Rules


@dataclass(frozen=True)
class KnownDeal:
    """A deal whose bottom row holds a king, a pair that makes 13 and two cards that do not."""

    code: str
    king: str
    pair: tuple[str, str]
    wrong: tuple[str, str]
    covered: str


def _known_deal() -> KnownDeal:
    for number in range(1000):
        code = DealCode(Rules(), number=number)
        pyramid = code.deal().pyramid
        bottom = [c for c in pyramid[21:] if not is_king(c)]
        kings = [c for c in pyramid[21:] if is_king(c)]
        pairs = [(a, b) for a in bottom for b in bottom if a < b and complement(a) + complement(b) == PAIR_SUM]
        if not kings or not pairs:
            continue
        rest = [c for c in bottom if c not in pairs[0]]
        wrong = [(a, b) for a in rest for b in rest if a < b and complement(a) + complement(b) != PAIR_SUM]
        if wrong:
            first, second = pairs[0]
            x, y = wrong[0]
            return KnownDeal(
                str(code), card_code(kings[0]), (card_code(first), card_code(second)), (card_code(x), card_code(y)),
                card_code(pyramid[15]),
            )  # fmt: skip
    raise AssertionError("no such deal among the first 1000")


DEAL = _known_deal()


@contextmanager
def _page(browser: Any, allowed: tuple[str, ...], **context: Any) -> Iterator[tuple[Any, list[str]]]:
    """A page in a fresh profile whose requests anywhere but ``allowed`` are aborted and noted."""
    profile = browser.new_context(**context)
    page = profile.new_page()
    outside: list[str] = []

    def only(route: Any) -> None:
        if route.request.url.startswith(allowed):
            route.continue_()
        else:
            outside.append(route.request.url)
            route.abort()

    page.route("**/*", only)
    try:
        yield page, outside
    finally:
        profile.close()


def _ready(page: Any, url: str) -> None:
    page.goto(url)
    page.wait_for_selector("body[data-ready=true]", timeout=20000)


def _deal_code(page: Any, code: str) -> None:
    page.click("#new-game")
    page.fill("#paste-code", code)
    page.click("#play-code")
    expect(page.locator("#code")).to_have_text(code, timeout=10000)


def _feedback(page: Any, text: str) -> None:
    expect(page.locator("#feedback")).to_have_text(text, timeout=10000)


def _card(page: Any, code: str) -> Any:
    return page.locator(f'[data-card="{code}"]')


def _stuck_after_drawing_everything() -> str:
    """A deal under no turn-over whose 23 draws, with no removal, end at a dead end."""
    rules = Rules(recycles=0)
    for number in range(1000):
        game = Game(DealCode(rules, number=number))
        for _ in range(23):
            game.play(DRAW)
        if game.status is Status.STUCK:
            return str(game.code)
    raise AssertionError("no such deal among the first 1000")
