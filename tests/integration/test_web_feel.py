"""The web client's texts, errors and motion in a real headless Chromium against a real server on the embedded Redis
(issue 45): the message line said again in a new language, plural forms, a refused code that keeps its dialog, a
stale second tab that catches up silently, a lost game's hint, a won game's stock, a real rate limit shown as a calm
wait, a card dragged onto its partner by mouse and by touch, and cards that move unless reduced motion is asked."""

from __future__ import annotations

from typing import Any

import httpx
from litestar import Litestar
from playwright.sync_api import expect

from pyramide.service.app import create_app
from pyramide.service.infra.settings import Settings
from tests.support.serving import serve_in_thread
from tests.support.web_client import DEAL, _card, _deal_code, _feedback, _page, _ready, _stuck_after_drawing_everything

# Counts every Web Animations API call the page makes (the page's own motion runs through Element.animate).
COUNT_ANIMATIONS = """
window.animationsStarted = 0;
const animate = Element.prototype.animate;
Element.prototype.animate = function (...args) { window.animationsStarted += 1; return animate.apply(this, args); };
"""


def _draw(page: Any, times: int = 1) -> None:
    for _ in range(times):
        moves = page.locator("#moves").text_content() or ""
        page.click("#stock")
        expect(page.locator("#moves")).not_to_have_text(moves, timeout=10000)


def test_a_language_switch_says_the_message_line_again(browser: Any, app: Litestar) -> None:
    with serve_in_thread(app) as api, _page(browser, (api,), locale="en-GB") as (page, outside):
        _ready(page, f"{api}/play/")
        _deal_code(page, DEAL.code)
        x, y = DEAL.wrong
        _card(page, x).click()
        expect(page.locator("#feedback")).to_contain_text("Selected: ")
        page.select_option("#language", "hu")
        expect(page.locator("#feedback")).to_contain_text("Kijelölve: ")
        assert x not in (page.locator("#feedback").text_content() or ""), "the card in words, not its code"
        page.select_option("#language", "en")
        _card(page, y).click()
        _feedback(page, "The sum must be: 13")
        page.select_option("#language", "hu")
        _feedback(page, "Az összegnek ennyinek kell lennie: 13")
        page.select_option("#language", "en")
        _feedback(page, "The sum must be: 13")
        assert outside == []


def test_counts_read_right_for_one_and_for_two_in_both_languages(browser: Any, app: Litestar) -> None:
    with serve_in_thread(app) as api, _page(browser, (api,), locale="en-GB") as (page, outside):
        _ready(page, f"{api}/play/")
        _deal_code(page, DEAL.code)
        expect(page.locator("#waste-count")).to_have_text("Waste: 1 card")
        assert page.locator("#stock").get_attribute("aria-label") == "Stock, 23 cards — draw"
        page.select_option("#language", "hu")
        expect(page.locator("#waste-count")).to_have_text("Dobópakli: 1 lap")
        _draw(page)
        expect(page.locator("#waste-count")).to_have_text("Dobópakli: 2 lap")
        page.select_option("#language", "en")
        expect(page.locator("#waste-count")).to_have_text("Waste: 2 cards")
        page.click("#open-challenge")
        expect(page.locator("#challenge-info")).to_contain_text("· 0 players")
        page.click("#challenge-start")
        expect(page.locator("#code")).to_contain_text("sealed until the close")
        page.click("#open-challenge")
        expect(page.locator("#challenge-info")).to_contain_text("· 1 player")
        assert "1 players" not in (page.locator("#challenge-info").text_content() or "")
        assert outside == []


def test_a_refused_code_keeps_the_dialog_open_with_a_plain_sentence(browser: Any, app: Litestar) -> None:
    with serve_in_thread(app) as api, _page(browser, (api,), locale="hu-HU") as (page, outside):
        _ready(page, f"{api}/play/")
        code = page.locator("#code").text_content()
        page.click("#new-game")
        order = page.eval_on_selector_all("#new-game-form button", "all => all.map((b) => b.value)")
        assert order == ["deal", "code", "cancel"], "Cancel last; the code field has its own button"
        page.fill("#paste-code", "PY1-N-ZZZ")
        page.click("#play-code")
        field = page.locator("#paste-code")
        expect(field).to_have_attribute("aria-invalid", "true")
        assert page.locator("#new-game-dialog[open]").count() == 1, "the dialog stays open"
        assert field.input_value() == "PY1-N-ZZZ", "what was typed is kept"
        error = page.locator(f"#{field.get_attribute('aria-describedby')}")
        expect(error).to_be_visible()
        sentence = error.text_content() or ""
        assert sentence == "Ez nem játszmakód. Egy kód így néz ki: PY1-N-AAAAAAS.", sentence
        assert "/code" not in (page.locator("body").inner_text())
        assert page.locator("#code").text_content() == code, "the game on the table is untouched"
        page.fill("#paste-code", DEAL.code)
        expect(field).not_to_have_attribute("aria-invalid", "true")
        page.keyboard.press("Enter")
        expect(page.locator("#code")).to_have_text(DEAL.code)
        assert page.locator("#new-game-dialog[open]").count() == 0
        assert outside == []


def test_a_stale_second_tab_catches_up_and_plays_the_tap(browser: Any, app: Litestar) -> None:
    with serve_in_thread(app) as api, _page(browser, (api,), locale="hu-HU") as (first, outside):
        _ready(first, f"{api}/play/")
        _deal_code(first, DEAL.code)
        second = first.context.new_page()  # the same profile: the same player and the same game
        _ready(second, f"{api}/play/")
        expect(second.locator("#code")).to_have_text(DEAL.code)
        _draw(first)
        assert first.locator("#moves").text_content() == "1"
        second.click("#stock")  # its ETag is the game's version before the first tab's draw
        expect(second.locator("#moves")).to_have_text("2", timeout=10000)
        expect(second.locator("#waste-count")).to_have_text("Dobópakli: 3 lap")
        assert second.locator("#feedback.error").count() == 0
        assert "verzió" not in (second.locator("#feedback").text_content() or "")
        assert outside == []


def test_a_hint_in_a_game_that_cannot_be_won_says_so(browser: Any, app: Litestar) -> None:
    code = _stuck_after_drawing_everything()
    with serve_in_thread(app) as api, _page(browser, (api,), locale="en-GB") as (page, outside):
        _ready(page, f"{api}/play/")
        _deal_code(page, code)
        _draw(page, 23)
        page.wait_for_selector("#end-dialog[open]", timeout=10000)
        page.keyboard.press("Escape")
        page.click("#hint")
        _feedback(page, "This game can no longer be won; there is no move to suggest.")
        assert page.locator("#stock").is_disabled(), "a dead end's stock cannot act"
        assert outside == []


def test_a_won_game_disables_the_stock_and_a_fresh_one_its_undo(browser: Any, app: Litestar) -> None:
    with serve_in_thread(app) as api, _page(browser, (api,), locale="en-GB") as (page, outside):
        _ready(page, f"{api}/play/")
        _deal_code(page, DEAL.code)
        assert page.locator("#undo").is_disabled(), "nothing to undo yet"
        token = page.evaluate("Object.entries(localStorage).find(([k]) => k.endsWith(':token'))[1]")
        game = page.evaluate("Object.entries(localStorage).find(([k]) => k.endsWith(':game'))[1]")
        _play_the_solved_line(api, token, game)
        page.reload()
        page.wait_for_selector("body[data-ready=true]", timeout=20000)
        expect(page.locator("#score")).to_have_text("280")
        expect(page.locator("#stock")).to_be_disabled()
        assert page.locator("#hint").is_disabled() and page.locator("#undo").is_disabled()
        assert outside == []


def _play_the_solved_line(api: str, token: str, game: str) -> None:
    """The public analysis's winning line, tapped through the API with the page's own player."""
    with httpx.Client(base_url=api, headers={"Authorization": f"Bearer {token}"}, timeout=30) as http:
        line = http.get(f"/v1/deals/{DEAL.code}/analysis").json()["line"]
        etag = http.get(f"/v1/games/{game}").headers["ETag"]
        for notation in line:
            taps = [{"target": "stock"}] if notation in ("D", "R") else [{"card": c} for c in notation.split("+")]
            for body in taps:
                answer = http.post(f"/v1/games/{game}/taps", json=body, headers={"If-Match": etag})
                assert answer.status_code == 200, answer.text
                etag = answer.headers["ETag"]
        assert answer.json()["status"] == "won"


def test_a_rate_limited_hint_is_a_calm_wait_with_the_control_off(browser: Any, settings: Settings) -> None:
    app = create_app(settings.but(limits={"per_minute": {"hints": 1}}))
    with serve_in_thread(app) as api, _page(browser, (api,), locale="hu-HU") as (page, outside):
        _ready(page, f"{api}/play/")
        _deal_code(page, DEAL.code)
        page.click("#hint")
        page.wait_for_selector(".hinted", timeout=10000)
        page.click("#hint")
        feedback = page.locator("#feedback")
        expect(feedback).to_contain_text("A tipp ", timeout=10000)
        words = feedback.text_content() or ""
        seconds = int(words.split()[2])
        assert words == f"A tipp {seconds} másodperc múlva újra kérhető." and 1 <= seconds <= 60, words
        assert page.locator("#feedback.error").count() == 0, "a wait, not an error"
        assert page.locator("#hint").is_disabled()
        expect(feedback).not_to_have_text(words, timeout=3000)  # the countdown runs
        page.select_option("#language", "en")
        expect(feedback).to_contain_text("You can ask for a hint again in ")
        assert outside == []


def test_a_card_dragged_onto_its_partner_plays_the_pair_by_mouse(browser: Any, app: Litestar) -> None:
    with serve_in_thread(app) as api, _page(browser, (api,), locale="en-GB") as (page, outside):
        _ready(page, f"{api}/play/")
        _deal_code(page, DEAL.code)
        (a, b), (x, y) = DEAL.pair, DEAL.wrong
        _mouse_drag(page, x, y)
        _feedback(page, "The sum must be: 13")
        expect(_card(page, x)).to_have_count(1)
        assert page.evaluate(f"document.querySelector('[data-card=\"{x}\"]').style.transform") == ""
        _mouse_drag(page, a, b)
        expect(page.locator("#score")).to_have_text("20")
        assert _card(page, a).count() == 0 and _card(page, b).count() == 0
        assert outside == []


def _mouse_drag(page: Any, source: str, target: str) -> None:
    start, end = _card(page, source).bounding_box(), _card(page, target).bounding_box()
    page.mouse.move(start["x"] + start["width"] / 2, start["y"] + start["height"] / 2)
    page.mouse.down()
    page.mouse.move(end["x"] + end["width"] / 2, end["y"] + end["height"] / 2, steps=5)
    page.mouse.up()


def test_a_card_dragged_onto_its_partner_plays_the_pair_by_touch(browser: Any, app: Litestar) -> None:
    context = {"locale": "en-GB", "has_touch": True, "is_mobile": True, "viewport": {"width": 390, "height": 844}}
    with serve_in_thread(app) as api, _page(browser, (api,), **context) as (page, outside):
        _ready(page, f"{api}/play/")
        _deal_code(page, DEAL.code)
        a, b = DEAL.pair
        page.evaluate(
            """([a, b]) => {
              const from = document.querySelector(`[data-card="${a}"]`).getBoundingClientRect();
              const to = document.querySelector(`[data-card="${b}"]`).getBoundingClientRect();
              const at = (r) => ({ clientX: r.left + r.width / 2, clientY: r.top + r.height / 2 });
              const touch = { pointerId: 7, pointerType: "touch", isPrimary: true, bubbles: true, composed: true };
              const card = document.querySelector(`[data-card="${a}"]`);
              card.dispatchEvent(new PointerEvent("pointerdown", { ...touch, ...at(from), button: 0 }));
              for (const f of [0.3, 0.6, 1]) {
                const x = from.left + (to.left - from.left) * f + from.width / 2;
                const y = from.top + (to.top - from.top) * f + from.height / 2;
                card.dispatchEvent(new PointerEvent("pointermove", { ...touch, clientX: x, clientY: y }));
              }
              card.dispatchEvent(new PointerEvent("pointerup", { ...touch, ...at(to), button: 0 }));
            }""",
            [a, b],
        )
        expect(page.locator("#score")).to_have_text("20")
        assert _card(page, a).count() == 0 and _card(page, b).count() == 0
        assert outside == []


def _removal_draw_and_undo(page: Any) -> list[int]:
    """The page's animation calls after a king's removal, a draw and an undo, each counted from zero."""
    counts = []
    for act in ("king", "draw", "undo"):
        page.evaluate("window.animationsStarted = 0")
        board = page.locator("#score").text_content(), page.locator("#waste-count").text_content()
        if act == "king":
            _card(page, DEAL.king).click()
        else:
            page.click("#stock" if act == "draw" else "#undo")
        page.wait_for_function(
            "([score, waste]) => document.querySelector('#score').textContent !== score"
            " || document.querySelector('#waste-count').textContent !== waste",
            arg=list(board),
            timeout=10000,
        )
        counts.append(page.evaluate("window.animationsStarted"))
    return counts


def test_cards_move_when_removed_drawn_and_undone_unless_reduced_motion(browser: Any, app: Litestar) -> None:
    with serve_in_thread(app) as api:
        with _page(browser, (api,), locale="en-GB") as (page, outside):
            page.add_init_script(COUNT_ANIMATIONS)
            _ready(page, f"{api}/play/")
            _deal_code(page, DEAL.code)
            removed, drawn, undone = _removal_draw_and_undo(page)
            assert removed >= 1 and drawn >= 1 and undone >= 1, (removed, drawn, undone)
            assert outside == []
        with _page(browser, (api,), locale="en-GB", reduced_motion="reduce") as (page, outside):
            page.add_init_script(COUNT_ANIMATIONS)
            _ready(page, f"{api}/play/")
            _deal_code(page, DEAL.code)
            assert _removal_draw_and_undo(page) == [0, 0, 0]
            assert page.evaluate("document.getAnimations().length") == 0
            assert outside == []


def test_escape_closes_a_dialog_without_repeating_its_last_choice(browser: Any, app: Litestar) -> None:
    """A dialog closed with Escape keeps the answer of its last close (HTML's returnValue): the page must not act
    on it again (deal a new game over the one on the table, open the leaderboard once more)."""
    with serve_in_thread(app) as api, _page(browser, (api,), locale="en-GB") as (page, outside):
        _ready(page, f"{api}/play/")
        first = page.locator("#code").text_content()
        page.click("#new-game")
        page.click("#deal")
        expect(page.locator("#code")).not_to_have_text(first or "", timeout=10000)
        dealt = page.locator("#code").text_content()
        page.click("#open-challenge")
        expect(page.locator("#challenge-board")).to_be_enabled(timeout=60000)  # its deal chosen by the solver
        page.click("#challenge-board")
        page.wait_for_selector("#board-dialog[open]")
        page.keyboard.press("Escape")
        expect(page.locator("#board-dialog")).to_be_hidden()

        page.click("#new-game")
        page.wait_for_selector("#new-game-dialog[open]")
        page.keyboard.press("Escape")
        page.click("#open-challenge")
        expect(page.locator("#challenge-board")).to_be_enabled()
        page.keyboard.press("Escape")
        page.wait_for_timeout(500)  # what either close would start has started by now
        expect(page.locator("#new-game-dialog")).to_be_hidden()
        expect(page.locator("#board-dialog")).to_be_hidden()
        assert page.locator("#code").text_content() == dealt, "Escape dealt a new game"
        assert outside == []
