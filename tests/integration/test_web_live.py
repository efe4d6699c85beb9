"""The web client follows live streams (issue 47) in a real headless Chromium against the real server: a move made
on another device moves the open board without a click, an open leaderboard shows a new win without reopening, and
with the streams unreachable the page falls back to polling and still shows the move. Which of the two did the work
is read from the requests the page sent."""

from __future__ import annotations

import time
from contextlib import ExitStack
from typing import Any

import httpx
from litestar import Litestar
from playwright.sync_api import expect

from pyramide.engine import DealCode
from pyramide.engine.moves import parse_record
from pyramide.service.app import create_app
from pyramide.service.games.commands_controller import move_body
from pyramide.service.infra.settings import Settings
from tests.support.layouts import EASY_CLEARING, easy_game
from tests.support.serving import serve_in_thread
from tests.support.waiting import eventually
from tests.support.web_page import _page, _token


def _game_id(page: Any, api: str) -> str:
    game_id = page.evaluate(f"localStorage.getItem('pyramide:{api}:game')")
    assert game_id
    return str(game_id)


def _draw(api: str, game_id: str, player: dict[str, str]) -> None:
    """One move on another device: a draw from the stock, through the API with the page's player."""
    answer = httpx.post(f"{api}/v1/games/{game_id}/moves", json={"type": "draw"}, headers=player)
    assert answer.status_code == 200, answer.text
    assert answer.json()["moves"] == 1


def test_a_move_on_another_device_moves_the_open_board_through_the_stream(browser: Any, app: Litestar) -> None:
    seen: list[str] = []
    with serve_in_thread(app) as api, _page(browser, api, "hu-HU", seen) as page:
        game_id = _game_id(page, api)
        booted = seen.count(f"GET v1/games/{game_id}")  # the first load reads the game once
        expect(page.locator("#moves")).to_have_text("0")
        page.wait_for_timeout(300)  # the stream is open (its first event is the state the page shows)
        _draw(api, game_id, _token(page, api))
        expect(page.locator("#moves")).to_have_text("1", timeout=3000)
        assert f"GET v1/games/{game_id}/events" in seen, seen
        assert seen.count(f"GET v1/games/{game_id}") == booted, seen  # no poll: the stream brought it


def test_an_open_leaderboard_shows_a_new_win_without_reopening(browser: Any, app: Litestar) -> None:
    seen: list[str] = []
    with serve_in_thread(app) as api, _page(browser, api, "en-GB", seen) as page:
        other = {"Authorization": f"Bearer {httpx.post(f'{api}/v1/players', json={}).json()['token']}"}
        layout = DealCode.for_layout(easy_game().layout).to_json()
        game = httpx.post(f"{api}/v1/games", json={"layout": layout}, headers=other).json()
        page.click("#new-game")
        page.fill("#paste-code", game["code"])
        page.keyboard.press("Enter")
        expect(page.locator("#code")).to_have_text(game["code"], timeout=10000)
        page.click("#open-board")
        page.wait_for_selector("#board-dialog[open]")
        expect(page.locator("#board-entries td")).to_have_text(["No wins yet."])
        path = f"v1/leaderboards/{game['code']}"
        opened = seen.count(f"GET {path}")  # the dialog read the board once
        page.wait_for_timeout(300)
        for move in parse_record(EASY_CLEARING):
            answer = httpx.post(f"{api}/v1/games/{game['id']}/moves", json=move_body(move), headers=other)
            assert answer.status_code == 200, answer.text
        assert answer.json()["status"] == "won"
        expect(page.locator("#board-entries tr")).to_have_count(1)
        expect(page.locator("#board-entries td").nth(3)).to_have_text("16", timeout=3000)
        expect(page.locator("#board-dialog")).to_have_attribute("open", "")
        assert f"GET {path}/events" in seen, seen
        assert seen.count(f"GET {path}") == opened, seen  # no poll: the stream brought it


def test_with_the_streams_refused_the_page_polls_and_still_shows_the_move(browser: Any, app: Litestar) -> None:
    seen: list[str] = []
    with serve_in_thread(app) as api, _page(browser, api, "en-GB", seen) as page:
        page.route("**/events", lambda route: route.fulfill(status=503, body="down"))
        first = _game_id(page, api)
        page.click("#new-game")
        page.click("#deal")  # a new game: its stream is refused from the start
        page.wait_for_function(f"localStorage.getItem('pyramide:{api}:game') !== {first!r}", timeout=10000)
        game_id = _game_id(page, api)
        _draw(api, game_id, _token(page, api))
        expect(page.locator("#moves")).to_have_text("1", timeout=8000)
        streams = [s for s in seen if s == f"GET v1/games/{game_id}/events"]
        polls = [s for s in seen if s == f"GET v1/games/{game_id}"]
        assert len(streams) >= 3 and polls, seen  # three refused streams, then its GET


def test_a_stream_the_service_ends_is_resumed_and_misses_no_move(browser: Any, settings: Settings) -> None:
    app = create_app(settings.but(streams={"max_s": 1.0}))  # each stream ends after a second
    seen: list[str] = []
    with serve_in_thread(app) as api, _page(browser, api, "en-GB", seen) as page:
        game_id = _game_id(page, api)
        for _ in range(50):  # the first stream has ended and the page opened another
            if seen.count(f"GET v1/games/{game_id}/events") >= 2:
                break
            page.wait_for_timeout(100)
        _draw(api, game_id, _token(page, api))
        expect(page.locator("#moves")).to_have_text("1", timeout=4000)
        assert seen.count(f"GET v1/games/{game_id}/events") >= 2, seen
        assert seen.count(f"GET v1/games/{game_id}") == 0, seen  # resumed streams, never a poll


def _hold_streams(api: str, player: dict[str, str], game_id: str, held: ExitStack) -> None:
    """PYRAMIDE_STREAMS_PER_PLAYER (5) streams of the game held open by another device (tried again while a stream
    that was just closed still counts)."""

    def opened() -> bool:
        device = ExitStack()
        client = device.enter_context(httpx.Client(base_url=api, headers=player, timeout=5))
        answers = [device.enter_context(client.stream("GET", f"/v1/games/{game_id}/events")) for _ in range(5)]
        if all(answer.status_code == 200 for answer in answers):
            held.enter_context(device)
            return True
        device.close()
        return False

    eventually(opened, 5, what="the page's stream released")


def test_a_player_at_the_cap_of_streams_gets_a_board_that_polls(browser: Any, app: Litestar) -> None:
    seen: list[str] = []
    with serve_in_thread(app) as api, _page(browser, api, "en-GB", seen) as page, ExitStack() as held:
        player = _token(page, api)
        game_id = _game_id(page, api)
        stream = f"GET v1/games/{game_id}/events"
        for _ in range(100):  # the page's stream is sent (the page is ready before it is)
            if stream in seen:
                break
            page.wait_for_timeout(100)
        page.goto("about:blank")  # the page's own stream closes
        _hold_streams(api, player, game_id, held)
        with page.expect_response(lambda answer: answer.url == f"{api}/{stream[4:]}" and answer.status == 429):
            page.goto(f"{api}/play/")  # its stream is refused, maybe only after the page is ready
        page.wait_for_selector("body[data-ready=true]", timeout=20000)
        reopened = len(seen)
        _draw(api, game_id, player)
        expect(page.locator("#moves")).to_have_text("1", timeout=5000)
        after = seen[reopened:]
        assert seen[:reopened].count(f"GET v1/games/{game_id}/events") == 2, seen  # the first, and the refused one
        assert after.count(f"GET v1/games/{game_id}/events") == 0, after  # a 429: no second try, but polls
        assert after.count(f"GET v1/games/{game_id}") >= 1, after


def test_a_move_pushed_while_a_tap_is_in_flight_is_shown_after_the_taps_answer(browser: Any, app: Litestar) -> None:
    seen: list[str] = []
    with serve_in_thread(app) as api, _page(browser, api, "en-GB", seen) as page:
        game_id = _game_id(page, api)
        player = _token(page, api)
        page.wait_for_timeout(300)  # the stream is open

        def held_tap(route: Any) -> None:
            """The page's tap reaches the service (version 1), another device draws (version 2) and the stream
            brings both to the page, all before the tap's answer (version 1) does."""
            answer = route.fetch()
            other = httpx.post(f"{api}/v1/games/{game_id}/moves", json={"type": "draw"}, headers=player)
            assert other.json()["moves"] == 2, other.text
            time.sleep(0.5)
            route.fulfill(response=answer)

        page.route(f"**/v1/games/{game_id}/taps", held_tap)
        page.click("#stock")
        expect(page.locator("#moves")).to_have_text("2", timeout=3000)
        page.wait_for_timeout(300)  # nothing older comes after
        expect(page.locator("#moves")).to_have_text("2")
        assert seen.count(f"GET v1/games/{game_id}") == 0, seen  # the stream, not a 412's re-read or a poll
