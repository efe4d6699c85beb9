"""Par, a game's review and its certificate in the web client (issue 46, item 6), in a real headless Chromium against
the real server on the embedded Redis: par beside the move counter once the solver knows it, the review of a won game
and of a game drawn into a dead end (the point of no return marked where the API says, the shortest continuation
listed as the API gives it), the certificate copied (read back from the browser's clipboard) and downloaded, both
verifying with ``pyramide verify``, and a rate-limited review shown as a countdown; axe-core on the view in Hungarian
and English."""

from __future__ import annotations

import contextlib
import re
import subprocess
import sys
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx
import jwt
import redis
from litestar import Litestar
from playwright.sync_api import expect

from pyramide.engine import DRAW, DealCode, Game, Rules, Status
from pyramide.engine.moves import parse_record
from pyramide.service.app import create_app
from pyramide.service.games.commands_controller import move_body
from pyramide.service.infra.settings import Settings
from pyramide.solver import solve
from tests.support.challenges import _deal
from tests.support.layouts import EASY_CLEARING, easy_game
from tests.support.serving import serve_in_thread
from tests.support.waiting import eventually
from tests.support.web_page import _axe, _page, _shot, _token, hold_read

VERIFY = [sys.executable, "-m", "pyramide", "verify"]


def _winnable_until_drawn_out() -> str:
    """A deal under no turn-over that the solver proves winnable, and that 23 draws with no removal leave at a dead
    end: its point of no return lies inside the record (a draw past the last chance), not at the deal."""
    for number in range(3000):
        code = DealCode(Rules(recycles=0), number=number)
        game = Game(code)
        for _ in range(23):
            game.play(DRAW)
        if game.status is Status.STUCK and solve(Game(code), budget=300_000).winnable:
            return str(code)
    raise AssertionError("no such deal among the first 3000")


def _play_code(page: Any, code: str) -> str:
    """Plays ``code`` through the New game dialog; the game's id."""
    page.click("#new-game")
    page.fill("#paste-code", code)
    page.click("#play-code")
    expect(page.locator("#code")).to_have_text(code)
    return str(page.evaluate("([key]) => localStorage.getItem(key)", [f"pyramide:{page.url.split('/play')[0]}:game"]))


def _par(api: str, code: str) -> dict[str, Any]:
    """getDeal once its par is worked out (bounded: 20 s)."""

    def deal() -> dict[str, Any]:
        body: dict[str, Any] = httpx.get(f"{api}/v1/deals/{code}").json()
        return body

    with contextlib.suppress(AssertionError):
        eventually(lambda: deal()["par_status"] != "pending", 20)
    return deal()


def _review(api: str, game: str, player: dict[str, str], step: int | None = None) -> dict[str, Any]:
    query = "" if step is None else f"?from={step}"
    answer = httpx.get(f"{api}/v1/games/{game}/review{query}", headers=player, timeout=30)
    assert answer.status_code == 200, answer.text
    result: dict[str, Any] = answer.json()
    return result


def _verified(api: str, jws: str, tmp_path: Path, name: str) -> None:
    """The JWS checks against the service's published keys (PyJWT) and replays to a win (``pyramide verify``)."""
    keys = jwt.PyJWKSet.from_dict(httpx.get(f"{api}/.well-known/jwks.json").json())
    kid = jwt.get_unverified_header(jws)["kid"]
    claims = jwt.decode(jws, key=keys[kid].key, algorithms=["EdDSA"])
    assert claims["record"] == EASY_CLEARING
    file = tmp_path / name
    file.write_text(jws)
    jwks = tmp_path / "jwks.json"
    jwks.write_text(httpx.get(f"{api}/.well-known/jwks.json").text)
    run = subprocess.run([*VERIFY, "--jwks", str(jwks), str(file)], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stdout + run.stderr


def test_a_won_game_shows_par_its_review_and_a_certificate_that_verifies(
    browser: Any, app: Litestar, tmp_path: Path
) -> None:
    code = str(DealCode.for_layout(easy_game().layout))
    with serve_in_thread(app) as api, _page(browser, api, "hu-HU") as page:
        page.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=api)
        game = _play_code(page, code)
        deal = _par(api, code)
        assert deal["par_status"] == "known" and deal["par"] == 16, deal
        expect(page.locator("#par")).to_have_text("Par: 16", timeout=10000)
        expect(page.locator("#moves")).to_have_accessible_name("Lépések Par: 16")
        player = _token(page, api)
        for move in parse_record(EASY_CLEARING)[:-1]:  # all but the last through the API, the last by a click
            assert httpx.post(f"{api}/v1/games/{game}/moves", json=move_body(move), headers=player).status_code == 200
        page.reload()
        page.wait_for_selector("body[data-ready=true]")
        page.click('button[data-card="KC"]')
        page.wait_for_selector("#end-dialog[open]")
        expect(page.locator("#end-cert")).to_be_visible()
        _axe(page, "end-dialog")

        page.click("#end-cert-copy")
        expect(page.locator("#end-cert-message")).to_have_text("A tanúsítvány a vágólapra került")
        copied = page.evaluate("navigator.clipboard.readText()")
        _verified(api, copied, tmp_path, "copied.jwt")
        with page.expect_download() as download:
            page.click("#end-cert-download")
        assert download.value.suggested_filename == f"pyramide-certificate-{game}.jwt"
        saved = Path(download.value.path()).read_text()  # signed afresh at each request: verified on its own
        _verified(api, saved, tmp_path, "downloaded.jwt")
        page.click("#end-cert-link")
        expect(page.locator("#end-cert-message")).to_contain_text("hivatkozása a vágólapra került")
        link = page.evaluate("navigator.clipboard.readText()")
        assert link == f"{api}/v1/games/{game}/certificate"
        assert httpx.get(link, headers=player).json()["claims"]["game"] == game

        page.click("#end-review")
        page.wait_for_selector("#replay-dialog[open] #review-panel:not([hidden])")
        expect(page.locator("#review-summary")).to_have_text("Megnyert játszma: minden lépésnél nyerhető maradt.")
        review = _review(api, game, player)  # once the page's own is answered: one solver request at a time
        expect(page.locator("#review-steps li")).to_have_count(review["steps"] + 1)
        shortest = [p["step"] for p in review["positions"] if p["on_shortest_line"]]
        steps = page.locator("#review-steps li.shortest").evaluate_all("l => l.map(e => e.dataset.step)")
        marked = [int(step) for step in steps]
        assert marked == shortest and len(shortest) == 16
        expect(page.locator("#review-verdict")).to_have_text("még nyerhető, legkevesebb 16 lépés van hátra")
        page.click("#review-continue")
        expect(page.locator("#review-line li").first).to_have_text("pikk király")
        line = _review(api, game, player, 0)["continuation"]["line"]
        expect(page.locator("#review-line li")).to_have_count(len(line))
        assert page.locator("#review-line li").evaluate_all("l => l.map(e => e.dataset.move)") == line
        expect(page.locator("#review-line li").first).to_have_text("pikk király")
        expect(page.locator("#review-cert")).to_be_visible()
        _axe(page, "replay-dialog")
        _shot(page, "review-hu")


def test_a_dead_end_s_review_marks_its_point_of_no_return_and_lists_a_way_out(browser: Any, app: Litestar) -> None:
    code = _winnable_until_drawn_out()
    with serve_in_thread(app) as api, _page(browser, api, "en-GB") as page:
        game = _play_code(page, code)
        deal = _par(api, code)
        assert deal["par_status"] == "known", deal
        expect(page.locator("#par")).to_have_text(f"Par {deal['par']}", timeout=10000)
        for _ in range(23):
            page.keyboard.press("d")
            expect(page.locator("#board")).to_have_attribute("aria-busy", "false")
        page.wait_for_selector("#end-dialog[open]")
        expect(page.locator("#end-cert")).to_be_hidden()
        page.click("#end-review")
        expect(page.locator("#review-steps li")).to_have_count(24)
        review = _review(api, game, _token(page, api))  # once the page's own is answered
        point = review["point_of_no_return"]
        assert point is not None and point >= 1, review
        expect(page.locator("#review-summary")).to_have_text(
            f"Point of no return: after step {point} (draw) the game could no longer be won."
        )
        expect(page.locator("#review-steps li.no-return")).to_have_count(1)
        assert page.locator("#review-steps li.no-return").get_attribute("data-step") == str(point)
        expect(page.locator("#review-steps li.no-return")).to_contain_text("point of no return")
        expect(page.locator(f'#review-steps li[data-step="{point}"]')).to_contain_text("could no longer be won")
        expect(page.locator("#review-cert")).to_be_hidden()

        page.click(f'#review-steps button[data-step="{point - 1}"]')
        expect(page.locator("#replay-step")).to_have_text(f"Step {point - 1} of 23")
        expect(page.locator(f'#review-steps button[data-step="{point - 1}"]')).to_have_attribute("aria-current", "step")
        page.click("#review-continue")
        expect(page.locator("#review-line-box")).to_be_visible()
        line = _review(api, game, _token(page, api), point - 1)["continuation"]["line"]
        expect(page.locator("#review-line-title")).to_have_text(
            re.compile(rf"^The shortest continuation from step {point - 1}: {len(line)} moves?$")
        )
        assert page.locator("#review-line li").evaluate_all("l => l.map(e => e.dataset.move)") == line
        page.click(f'#review-steps button[data-step="{point}"]')
        expect(page.locator("#review-continue")).to_be_disabled()
        _axe(page, "replay-dialog")
        _shot(page, "review-en")
        page.keyboard.press("Escape")
        page.click("#open-games")
        page.click(f'#games-entries button[data-game="{game}"]:text-is("Review")')
        expect(page.locator("#review-steps li.no-return")).to_have_attribute("data-step", str(point))


def test_a_refused_review_counts_down_and_asks_again(browser: Any, settings: Settings) -> None:
    app = create_app(settings.but(limits={"per_minute": {"analyses": 1}}))
    code = _winnable_until_drawn_out()
    with serve_in_thread(app) as api, _page(browser, api, "en-GB") as page:
        lost = str(DealCode(Rules(recycles=0), number=0))
        _play_code(page, lost)
        assert _par(api, lost)["par_status"] == "unwinnable"
        expect(page.locator("#par")).to_have_text("Par: none, the deal cannot be won", timeout=10000)
        _play_code(page, code)
        expect(page.locator("#par")).not_to_have_text("Par: none, the deal cannot be won")
        for _ in range(23):
            page.keyboard.press("d")
            expect(page.locator("#board")).to_have_attribute("aria-busy", "false")
        page.wait_for_selector("#end-dialog[open]")
        page.click("#end-review")
        expect(page.locator("#review-steps li")).to_have_count(24)
        page.click("#review-continue")  # the address's second analysis within its window: 429 with Retry-After
        message = page.locator("#review-message")
        expect(message).to_have_text(re.compile(r"^The solver is busy; trying again in \d+ seconds?$"))
        first = int(re.findall(r"\d+", message.text_content() or "")[0])
        assert first >= 2
        expect(message).to_have_text(f"The solver is busy; trying again in {first - 1} second" + "s" * (first > 2))


def _a_winnable_challenge(api: str, redis_client: redis.Redis) -> tuple[dict[str, Any], list[Any]]:
    """Today's challenge of the first preset whose deal (read from the server's Redis, which no client may) the
    solver wins, and its shortest line: each fresh server draws its own deals."""
    for preset in httpx.get(f"{api}/v1/rules").json()["presets"]:
        challenge: dict[str, Any] = httpx.get(f"{api}/v1/challenges/current?rules={preset['segment']}").json()
        analysis = solve(Game(_deal(redis_client, challenge["id"])), budget=300_000, shortest=True)
        if analysis.shortest:
            return {**challenge, "rules_segment": preset["segment"]}, list(analysis.shortest)
    raise AssertionError("no preset's challenge is won within the budget")


def test_a_won_challenge_game_says_when_its_certificate_is_given(
    browser: Any, app: Litestar, redis_client: redis.Redis
) -> None:
    with serve_in_thread(app) as api, _page(browser, api, "en-GB") as page:
        challenge, line = _a_winnable_challenge(api, redis_client)
        page.click("#open-challenge")
        page.select_option("#challenge-preset", challenge["rules_segment"])  # reads the preset's challenge again
        expect(page.locator("#board")).to_have_attribute("aria-busy", "false")  # read: "Start" is not dropped
        expect(page.locator("#challenge-info")).to_contain_text(challenge["id"])
        page.click("#challenge-start")
        expect(page.locator("#code")).to_contain_text("sealed until the close")
        expect(page.locator("#par")).to_be_hidden()
        game = str(page.evaluate("([key]) => localStorage.getItem(key)", [f"pyramide:{api}:game"]))
        player = _token(page, api)
        for move in line[:-1]:  # the deal is read from the server's Redis
            assert httpx.post(f"{api}/v1/games/{game}/moves", json=move_body(move), headers=player).status_code == 200
        page.reload()
        page.wait_for_selector("body[data-ready=true]")
        last = str(line[-1])
        if last in ("D", "R"):
            page.click("#stock")
        cards = [] if last in ("D", "R") else last.split("+")
        for index, card in enumerate(cards):
            page.click(f'button[data-card="{card}"]')
            if index < len(cards) - 1:  # one tap at a time: a pair's second card waits for the first's selection
                expect(page.locator(f'button[data-card="{card}"]')).to_have_attribute("aria-pressed", "true")
        page.wait_for_selector("#end-dialog[open]")
        expect(page.locator("#end-cert")).to_be_hidden()
        closes = datetime.fromisoformat(challenge["closes_at"]).astimezone().strftime("%d/%m/%Y, %H:%M")
        expect(page.locator("#end-cert-message")).to_have_text(
            f"The certificate is given after the challenge closes, at {closes}."
        )


def test_start_waits_for_the_challenge_of_the_preset_chosen_in_the_dialog(browser: Any, app: Litestar) -> None:
    with serve_in_thread(app) as api, _page(browser, api, "en-GB", script=hold_read("/v1/challenges/current")) as page:
        other = next(p["segment"] for p in httpx.get(f"{api}/v1/rules").json()["presets"] if p["segment"] != "N")
        first = httpx.get(f"{api}/v1/challenges/current?rules=N", timeout=60).json()["id"]  # the solver chooses
        chosen = httpx.get(f"{api}/v1/challenges/current?rules={other}", timeout=60).json()["id"]
        info, start = page.locator("#challenge-info"), page.locator("#challenge-start")
        page.click("#open-challenge")
        expect(info).to_contain_text(first)
        expect(start).to_be_enabled()
        page.evaluate("window.heldRead.armed = true")
        page.select_option("#challenge-preset", other)  # reads that preset's challenge: held
        page.wait_for_function("window.heldRead.release !== null")
        expect(start).to_be_disabled()  # a start now would be dropped while the read is in flight
        expect(page.locator("#challenge-board")).to_be_disabled()  # as would the leaderboard
        expect(info).not_to_contain_text(first)  # not the other preset's challenge beside the one chosen
        page.evaluate("window.heldRead.release()")
        expect(info).to_contain_text(chosen)
        expect(start).to_be_enabled()
        expect(page.locator("#challenge-board")).to_be_enabled()
        expect(page.locator("#challenge-preset")).to_have_value(other)
        page.click("#challenge-start")
        expect(page.locator("#code")).to_contain_text("sealed until the close")
        game = str(page.evaluate("([key]) => localStorage.getItem(key)", [f"pyramide:{api}:game"]))
        assert httpx.get(f"{api}/v1/games/{game}", headers=_token(page, api)).json()["challenge"] == chosen


def _close_during_a_presets_read(page: Any, api: str) -> str:
    """Opens the challenge dialog, chooses another preset, whose read is held, and closes the dialog with Escape
    while the read is out; the challenge of that preset."""
    other = next(p["segment"] for p in httpx.get(f"{api}/v1/rules").json()["presets"] if p["segment"] != "N")
    httpx.get(f"{api}/v1/challenges/current?rules=N", timeout=60)  # each chosen by the solver first
    chosen: str = httpx.get(f"{api}/v1/challenges/current?rules={other}", timeout=60).json()["id"]
    page.click("#open-challenge")
    expect(page.locator("#challenge-start")).to_be_enabled()
    page.evaluate("window.heldRead.armed = true")
    page.select_option("#challenge-preset", other)
    page.wait_for_function("window.heldRead.release !== null")
    page.keyboard.press("Escape")
    expect(page.locator("#challenge-dialog")).to_be_hidden()
    return chosen


def test_a_challenge_dialog_closed_during_a_presets_read_stays_closed(browser: Any, app: Litestar) -> None:
    with serve_in_thread(app) as api, _page(browser, api, "en-GB", script=hold_read("/v1/challenges/current")) as page:
        chosen = _close_during_a_presets_read(page, api)
        page.evaluate("window.heldRead.release()")
        expect(page.locator("#challenge-info")).to_contain_text(chosen)  # the answer is in
        expect(page.locator("#challenge-dialog")).to_be_hidden()


def test_a_challenge_dialog_asked_open_again_during_a_presets_read_opens_on_its_answer(
    browser: Any, app: Litestar
) -> None:
    """The player closes the dialog while a preset's challenge is read, then asks for it again before the answer:
    the click is not lost, the dialog opens on that answer, on the preset chosen."""
    with serve_in_thread(app) as api, _page(browser, api, "en-GB", script=hold_read("/v1/challenges/current")) as page:
        chosen = _close_during_a_presets_read(page, api)
        page.click("#open-challenge")  # while the read is still out
        expect(page.locator("#challenge-dialog")).to_be_hidden()
        page.evaluate("window.heldRead.release()")
        expect(page.locator("#challenge-dialog")).to_be_visible()
        expect(page.locator("#challenge-info")).to_contain_text(chosen)
        expect(page.locator("#challenge-start")).to_be_enabled()
