"""The player's views of the web client (settings, rules and help, my games and wins, the replay, "play this deal
again") in a real headless Chromium against the real server: each reached by mouse and by keyboard and doing what it
says, and axe-core finding no violation of any impact on each, in Hungarian and English."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
from litestar import Litestar
from playwright.sync_api import expect

from pyramide.engine import DealCode
from pyramide.engine.moves import parse_record
from pyramide.service.games.commands_controller import move_body
from tests.support.layouts import EASY_CLEARING, easy_game
from tests.support.serving import serve_in_thread
from tests.support.web_page import _axe, _page, _shot, _token, hold_read

NAME = "Kati Teszt"


def _win(api: str, player: dict[str, str]) -> str:
    """A deal cleared through the API with the page's player (16 moves, 280 points): its code."""
    layout = DealCode.for_layout(easy_game().layout).to_json()
    game = httpx.post(f"{api}/v1/games", json={"layout": layout}, headers=player).json()
    for move in parse_record(EASY_CLEARING):
        answer = httpx.post(f"{api}/v1/games/{game['id']}/moves", json=move_body(move), headers=player)
        assert answer.status_code == 200, answer.text
    assert answer.json()["status"] == "won"
    code: str = game["code"]
    return code


def _stat(page: Any, name: str) -> str:
    page.click("#open-stats")
    page.wait_for_selector("#stats-dialog[open]")
    value = page.locator(f'[data-stat="{name}"]').text_content()
    page.keyboard.press("Escape")
    return value or ""


def test_by_mouse_a_name_goes_on_the_board_and_a_won_game_replays_and_deals_again(browser: Any, app: Litestar) -> None:
    with serve_in_thread(app) as api, _page(browser, api, "hu-HU") as page:
        page.click("#open-settings")
        page.wait_for_selector("#settings-dialog[open]")
        page.fill("#player-name", "\u200b")
        page.click("#save-name")
        refused = page.locator("#settings-message")
        expect(refused).to_have_class("view-message error")
        assert "/name" not in (refused.text_content() or "") and len(refused.text_content() or "") > 10
        _save_name_and_no_explanations(page, f"A név elmentve: {NAME}", "A beállítás elmentve")
        assert httpx.get(f"{api}/v1/players/me", headers=_token(page, api)).json()["explain_errors"] is False
        assert not page.locator("#explain-errors").is_checked(), "new games follow the setting"
        _axe(page, "settings-dialog")
        page.keyboard.press("Escape")

        code = _win(api, _token(page, api))
        page.click("#open-games")
        won = page.locator('#games-entries tr[data-status="won"]')
        expect(won).to_have_count(1)
        expect(won.locator("td").first).to_have_text("nyert")
        expect(page.locator("#wins-entries tr[data-game]")).to_have_count(1)
        _axe(page, "games-dialog")
        won.get_by_role("button", name="Visszajátszás").click()
        board = page.locator("#replay-board")
        expect(board).to_have_attribute("data-step", "0")
        expect(page.locator("#replay-pyramid .replay-card")).to_have_count(28)
        page.click("#replay-forward")
        expect(board).to_have_attribute("data-step", "1")
        expect(page.locator("#replay-pyramid .replay-card")).to_have_count(27)
        page.click("#replay-end")
        expect(board).to_have_attribute("data-step", "16")
        expect(board).to_have_attribute("data-status", "won")
        expect(page.locator("#replay-score")).to_have_text("280")
        expect(page.locator("#replay-pyramid .replay-card")).to_have_count(0)
        page.click("#replay-back")
        expect(board).to_have_attribute("data-step", "15")
        expect(page.locator("#replay-pyramid .replay-card")).to_have_count(1)
        _axe(page, "replay-dialog")

        page.click("#replay-again")
        expect(page.locator("#code")).to_have_text(code, timeout=10000)
        expect(page.locator("#moves")).to_have_text("0")
        page.click("#open-board")
        expect(page.locator("#board-entries tr")).to_have_count(1)
        expect(page.locator("#board-entries td").nth(1)).to_have_text(NAME)


def _save_name_and_no_explanations(page: Any, name_saved: str, setting_saved: str) -> None:
    """In the open settings dialog: the name ``NAME`` saved, then "explain errors" (on by default) switched off,
    each confirmed by the dialog's message."""
    message = page.locator("#settings-message")
    page.fill("#player-name", NAME)
    page.click("#save-name")
    expect(message).to_have_text(name_saved)
    expect(page.locator("#settings-explain")).to_be_checked()
    page.click("#settings-explain")
    expect(message).to_have_text(setting_saved)


def test_a_late_first_read_of_the_player_undoes_no_setting_saved_meanwhile(browser: Any, app: Litestar) -> None:
    held = hold_read("/v1/players/me", first=True)
    with serve_in_thread(app) as api, _page(browser, api, "en-GB", script=held) as page:
        page.wait_for_function("window.heldRead.answered && window.heldRead.release !== null")
        page.click("#open-settings")
        page.wait_for_selector("#settings-dialog[open]")
        _save_name_and_no_explanations(page, f"Name saved: {NAME}", "Setting saved")
        saved = httpx.get(f"{api}/v1/players/me", headers=_token(page, api)).json()
        assert (saved["name"], saved["explain_errors"]) == (NAME, False)
        assert not page.evaluate("window.heldRead.received"), "the first read was still held"

        page.evaluate("window.heldRead.release()")
        page.wait_for_function("window.heldRead.received")
        expect(page.locator("#player-name")).to_have_value(NAME)
        expect(page.locator("#settings-explain")).not_to_be_checked()
        assert not page.locator("#explain-errors").is_checked(), "new games follow the setting saved"
        saved = httpx.get(f"{api}/v1/players/me", headers=_token(page, api)).json()
        assert (saved["name"], saved["explain_errors"]) == (NAME, False)


def test_by_keyboard_help_reset_export_and_delete_do_what_they_say(browser: Any, app: Litestar) -> None:
    with serve_in_thread(app) as api, _page(browser, api, "en-GB") as page:
        page.keyboard.press("?")
        page.wait_for_selector("#help-dialog[open]")
        help_text = page.locator("#help-dialog").inner_text()
        for words in ("add up to 13", "king", "top card of the waste", "last 100", "280", "No more possible moves"):
            assert words in help_text, words
        _axe(page, "help-dialog")
        page.keyboard.press("Escape")

        player = _token(page, api)
        _win(api, player)
        assert _stat(page, "wonGames") == "1"
        for _ in range(40):  # Tab through the header to the settings button
            if page.evaluate("document.activeElement.id") == "open-settings":
                break
            page.keyboard.press("Tab")
        page.keyboard.press("Enter")
        page.wait_for_selector("#settings-dialog[open]")
        _axe(page, "settings-dialog")

        page.focus("#reset-stats")
        page.keyboard.press("Enter")
        page.wait_for_selector("#confirm-dialog[open]")
        expect(page.locator("#confirm-text")).to_contain_text("statistics")
        _axe(page, "confirm-dialog")
        page.keyboard.press("Shift+Tab")  # from Cancel to the confirming button
        page.keyboard.press("Enter")
        expect(page.locator("#settings-message")).to_have_text("Statistics reset")
        page.keyboard.press("Escape")
        assert _stat(page, "wonGames") == "0", "the reset emptied the statistics"

        page.click("#open-settings")
        with page.expect_download() as download:
            page.click("#export-data")
        file = download.value
        assert file.suggested_filename.startswith("pyramide-my-data-") and file.suggested_filename.endswith(".json")
        exported = json.loads(Path(file.path()).read_text("utf-8"))
        assert exported == httpx.get(f"{api}/v1/players/me/export", headers=player).json()

        page.click("#erase-data")
        page.wait_for_selector("#confirm-dialog[open]")
        for lost in ("name", "statistics", "every game", "leaderboard"):
            expect(page.locator("#confirm-text")).to_contain_text(lost)
        page.click("#confirm-yes")
        expect(page.locator("#settings-message")).to_have_text("Your data was deleted; you play as a new player.")
        assert httpx.get(f"{api}/v1/players/me", headers=player).status_code == 401, "the old player is gone"
        fresh = _token(page, api)
        assert fresh != player
        assert httpx.get(f"{api}/v1/players/me/games", headers=fresh).json()["entries"][0]["moves"] == 0
        page.keyboard.press("Escape")
        assert _stat(page, "played") == "0"


def test_every_view_has_no_axe_violation_in_either_language(browser: Any, app: Litestar) -> None:
    with serve_in_thread(app) as api, _page(browser, api, "en-GB") as page:
        _win(api, _token(page, api))
        for language in ("hu", "en"):
            page.select_option("#language", language)
            for view in ("help", "settings", "games"):
                page.click(f"#open-{view}")
                page.wait_for_selector(f"#{view}-dialog[open]")
                if view == "games":
                    expect(page.locator("#games-entries tr[data-game]")).to_have_count(2)
                _axe(page, f"{view}-dialog")
                _shot(page, f"{view}-{language}")
                if view == "games":
                    page.locator('#games-entries tr[data-status="won"] button').first.click()
                    page.click("#replay-forward")
                    expect(page.locator("#replay-board")).to_have_attribute("data-step", "1")
                    _axe(page, "replay-dialog")
                    _shot(page, f"replay-{language}")
                    page.keyboard.press("Escape")
                page.keyboard.press("Escape")


def test_my_games_come_page_by_page_and_an_unfinished_one_resumes(browser: Any, app: Litestar) -> None:
    with serve_in_thread(app) as api, _page(browser, api, "en-GB") as page:
        player = _token(page, api)
        first = httpx.post(f"{api}/v1/games", json={"code": "PY1-N-AAAAAAS"}, headers=player).json()
        httpx.post(f"{api}/v1/games/{first['id']}/moves", json={"type": "draw"}, headers=player)
        for _ in range(20):  # with the page's own deal, 22 games: a page of 20 and one of 2
            assert httpx.post(f"{api}/v1/games", json={}, headers=player).status_code == 201
        page.focus("#open-games")
        page.keyboard.press("Enter")
        rows = page.locator("#games-entries tr[data-game]")
        expect(rows).to_have_count(20)
        page.wait_for_selector("#games-dialog[open]")  # opened once both lists are in: "more" can take focus
        page.focus("#games-more")
        expect(page.locator("#games-more")).to_be_focused()
        page.keyboard.press("Enter")
        expect(rows).to_have_count(22)
        expect(page.locator("#games-more")).to_be_hidden()
        page.locator(f'#games-entries tr[data-game="{first["id"]}"] button').first.click()
        expect(page.locator("#code")).to_have_text("PY1-N-AAAAAAS", timeout=10000)
        expect(page.locator("#moves")).to_have_text("1")
