"""Whole games through HTTP against the real (embedded) Redis."""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import pytest
from litestar.testing import TestClient
from pydantic import TypeAdapter

from pyramide.engine import DealCode, Game, Rules, parse_move
from pyramide.engine.moves import parse_record
from pyramide.service.app import create_app
from pyramide.service.deals.analysis import Solver
from pyramide.service.deals.schemas import Analysis
from pyramide.service.errors import DomainError, ErrorCode
from pyramide.service.games.commands_controller import move_body, move_from_body
from pyramide.service.games.schemas import CardTap, MoveBody
from pyramide.service.infra.settings import Settings
from pyramide.solver import solve
from tests.support.layouts import EASY_CLEARING, dead_end_moves, dead_end_start, doc_layout, easy_game
from tests.support.metrics import metric_values
from tests.support.players import new_player

Client = TestClient[Any]


def _layout_game(client: Client, player: dict[str, str], layout_json: dict[str, Any], **extra: Any) -> dict[str, Any]:
    response = client.post("/v1/games", json={"layout": layout_json, **extra}, headers=player)
    assert response.status_code == 201, response.text
    game: dict[str, Any] = response.json()
    return game


def _doc_game(client: Client, player: dict[str, str], **extra: Any) -> dict[str, Any]:
    return _layout_game(client, player, DealCode.for_layout(doc_layout()).to_json(), **extra)


def _slot(snapshot: dict[str, Any], row: int, col: int) -> dict[str, Any]:
    (slot,) = [s for s in snapshot["pyramid"] if s["row"] == row and s["col"] == col]
    found: dict[str, Any] = slot
    return found


def _row(snapshot: dict[str, Any], row: int) -> list[str | None]:
    return [s["card"] for s in snapshot["pyramid"] if s["row"] == row]


def test_the_write_routes_answer_with_the_headers_a_read_has(client: Client, player: dict[str, str]) -> None:
    """A move, a tap and an abandonment answer with the snapshot's headers, exactly those a read of the game has
    (their response is sent by hand, ``http.responses.EncodedJson``): type, length, ETag, language, Vary, request
    id; and the per-address allowance of moves they count against (a read counts against none)."""
    game = client.post("/v1/games", json={"code": "PY1-N-AAAAAAS"}, headers=player).json()
    path = f"/v1/games/{game['id']}"
    answers = [
        client.post(f"{path}/moves", json={"type": "draw"}, headers={**player, "Accept-Language": "en"}),
        client.post(f"{path}/taps", json={"target": "stock"}, headers=player),
        client.post(f"{path}/abandon", headers=player),
    ]
    read = client.get(path, headers=player)
    for answer, version in zip(answers, (1, 2, 3), strict=True):
        assert answer.status_code == 200, answer.text
        assert sorted(set(answer.headers) - {"ratelimit", "ratelimit-policy"}) == sorted(read.headers)
        assert answer.headers["ratelimit-policy"].startswith('"address_moves";')
        assert answer.headers["content-type"] == "application/json"
        assert int(answer.headers["content-length"]) == len(answer.content)
        assert answer.headers["etag"] == f'"{version}"'
        assert answer.json()["version"] == version
    assert answers[0].headers["content-language"] == "en" and answers[1].headers["content-language"] == "hu"


def test_create_returns_the_snapshot_with_location_and_etag(client: Client, player: dict[str, str]) -> None:
    response = client.post("/v1/games", json={"code": "py1-2s-aaaaaab"}, headers=player)
    assert response.status_code == 201
    game = response.json()
    assert response.headers["location"] == f"/v1/games/{game['id']}"
    assert response.headers["etag"] == '"0"'
    assert game["code"] == "PY1-2S-AAAAAAB"
    assert game["rules"] == {"recycles": 2, "stock_waste_pairs": True, "cover_pairs": False, "strict_win": False}
    assert game["status"] == "in_progress" and game["score"] == 0 and game["moves"] == 0
    assert len(game["pyramid"]) == 28 and game["stock"] == {"count": 23}
    assert game["waste"]["count"] == 1 and game["waste"]["top"] == "QC"
    assert game["recycles"] == {"used": 0, "left": 2}
    assert game["elapsed_ms"] is None and game["undo_available"] == 0
    assert _row(game, 7) == ["KC", "KH", "10H", "10S", "JS", "10D", "8S"]
    assert [s["free"] for s in game["pyramid"]].count(True) == 7
    assert "order" not in str(game["stock"])
    again = client.get(f"/v1/games/{game['id']}", headers=player)
    assert again.json() == {**game, "elapsed_ms": None}


def test_random_games_and_rules(client: Client, player: dict[str, str]) -> None:
    first = client.post("/v1/games", json={}, headers=player).json()
    second = client.post("/v1/games", json={"rules": {"recycles": 0, "strict_win": True}}, headers=player).json()
    assert first["code"] != second["code"]
    assert DealCode.parse(second["code"]).rules == Rules(recycles=0, strict_win=True)


def test_the_rules_documents_examples_by_taps(client: Client, player: dict[str, str]) -> None:
    game = _doc_game(client, player, explain_errors=True)
    url = f"/v1/games/{game['id']}/taps"
    covered = client.post(url, json={"card": "QC"}, headers=player).json()
    assert covered["feedback"] == {"code": "card_covered", "message": "Ezt a lapot egy másik lap takarja"}
    assert covered["version"] == 0, "a tap that does nothing changes nothing"
    assert client.post(url, json={"card": "7C"}, headers=player).json()["selected"] == "7C"
    refused = client.post(url, json={"card": "7S"}, headers={**player, "Accept-Language": "en"}).json()
    assert refused["feedback"] == {"code": "sum_must_be_13", "message": "The sum must be: 13"}
    assert refused["selected"] == "7S"
    king = client.post(url, json={"card": "KD"}, headers=player).json()
    assert king["feedback"]["code"] == "removed" and king["score"] == 10
    client.post(url, json={"card": "10C"}, headers=player)
    pair = client.post(url, json={"card": "3S"}, headers=player).json()
    assert [c for c in _row(pair, 7) if c] == ["7C", "3H", "4H", "7S"]
    assert _row(pair, 6) == ["QC", "2C", "8D", "10D", "10S", "JS"]
    assert (pair["score"], pair["moves"], pair["stock"]["count"], pair["waste"]["top"]) == (30, 2, 23, "7D")
    record = client.get(f"/v1/games/{game['id']}/record", headers=player).json()
    assert record["record"] == "KD 10C+3S"


def test_a_partner_that_is_not_free_can_be_tapped_first(client: Client, player: dict[str, str]) -> None:
    """Issue 45: under the variants, the waste card beneath a fresh draw (2S) and a card covered only by its partner
    (C) are named in ``legal_moves``, so a page shows them tappable: tapped first they are selected (no 4xx), a hint
    and a read of that game still answer (the stored selection is valid), and tapping the partner pairs them."""
    game = client.post("/v1/games", json={"code": "PY1-2S-AAAAAAS"}, headers=player).json()
    url = f"/v1/games/{game['id']}"
    drawn = client.post(f"{url}/taps", json={"target": "stock"}, headers=player).json()
    assert drawn["waste"]["cards"][-2:] == ["10C", "3S"] and "10C+3S" in drawn["legal_moves"]
    beneath = client.post(f"{url}/taps", json={"card": "10C"}, headers=player)
    assert beneath.status_code == 200, beneath.text
    assert beneath.json()["selected"] == "10C" and beneath.json()["feedback"]["code"] == "selected"
    assert client.get(f"{url}/hint", headers=player).status_code == 200
    assert client.get(url, headers=player).json()["selected"] == "10C"
    paired = client.post(f"{url}/taps", json={"card": "3S"}, headers=player).json()
    assert paired["feedback"]["code"] == "removed" and paired["waste"]["count"] == 0 and paired["selected"] is None

    game = client.post("/v1/games", json={"code": "PY1-C-EAHENOK"}, headers=player).json()
    url = f"/v1/games/{game['id']}"
    for move in ["KH", "KD", "D", "AC+QC", "9S+4S", "JC+2C", "10H+3C"]:
        assert client.post(f"{url}/moves", json=move_body(parse_move(move)), headers=player).status_code == 200
    covered = client.post(f"{url}/taps", json={"card": "8C"}, headers=player)
    assert covered.status_code == 200 and covered.json()["selected"] == "8C", covered.text
    assert client.get(f"{url}/hint", headers=player).status_code == 200
    paired = client.post(f"{url}/taps", json={"card": "5H"}, headers=player).json()
    assert paired["feedback"]["code"] == "removed" and paired["selected"] is None
    assert "8C" not in [s["card"] for s in paired["pyramid"]]


def test_the_covered_card_is_silent_without_explanations(client: Client, player: dict[str, str]) -> None:
    game = _doc_game(client, player)
    covered = client.post(f"/v1/games/{game['id']}/taps", json={"card": "QC"}, headers=player).json()
    assert covered["feedback"] == {"code": "card_covered", "message": None}


def test_a_full_won_game_scores_280(client: Client, player: dict[str, str]) -> None:
    game = _layout_game(client, player, DealCode.for_layout(easy_game().layout).to_json())
    url = f"/v1/games/{game['id']}/moves"
    for move in parse_record(EASY_CLEARING):
        snapshot = client.post(url, json=move_body(move), headers=player).json()
    assert snapshot["status"] == "won" and snapshot["score"] == 280 and snapshot["moves"] == 16
    assert snapshot["feedback"] == {"code": "won", "message": "Gratulálunk, nyertél!"}
    assert snapshot["finished_at"] is not None and snapshot["elapsed_ms"] >= 0
    assert snapshot["legal_moves"] == [] and snapshot["undo_available"] == 0
    late = client.post(url, json={"type": "undo"}, headers=player)
    assert late.status_code == 409 and late.json()["code"] == "game_over"


def test_a_stuck_game_says_so_and_can_still_undo(client: Client, player: dict[str, str]) -> None:
    game = _layout_game(client, player, dead_end_start().code.to_json())
    url = f"/v1/games/{game['id']}/moves"
    for move in dead_end_moves(moves_left=0):
        response = client.post(url, json=move_body(move), headers=player)
        assert response.status_code == 200, response.text
    stuck = response.json()
    assert stuck["status"] == "stuck" and stuck["legal_moves"] == []
    assert stuck["feedback"] == {"code": "no_more_moves", "message": "Nincs több lehetséges lépés"}
    assert stuck["stock"]["count"] == 0 and stuck["waste"]["count"] == 0
    undone = client.post(url, json={"type": "undo"}, headers=player).json()
    assert undone["status"] == "in_progress" and undone["moves"] == stuck["moves"]


def test_undo_takes_back_points_but_not_the_counter(client: Client, player: dict[str, str]) -> None:
    game = _doc_game(client, player)
    url = f"/v1/games/{game['id']}/moves"
    client.post(url, json={"type": "king", "card": "KD"}, headers=player)
    client.post(url, json={"type": "draw"}, headers=player)
    undone = client.post(url, json={"type": "undo"}, headers=player).json()
    assert undone["moves"] == 2 and undone["stock"]["count"] == 23 and undone["undo_available"] == 1
    undone = client.post(url, json={"type": "undo"}, headers=player).json()
    assert undone["score"] == 0 and undone["moves"] == 2 and _slot(undone, 7, 6)["card"] == "KD"
    nothing = client.post(url, json={"type": "undo"}, headers=player)
    assert nothing.status_code == 409 and nothing.json()["code"] == "nothing_to_undo"
    record = client.get(f"/v1/games/{game['id']}/record", headers=player).json()
    assert record["moves"] == ["KD", "D", "U", "U"]
    replayed = Game(DealCode.parse(record["code"]))
    for move in parse_record(record["record"]):
        replayed.play(move)
    assert replayed.score == 0 and replayed.moves == 2


def test_abandon_ends_the_game(client: Client, player: dict[str, str]) -> None:
    game = _doc_game(client, player)
    abandoned = client.post(f"/v1/games/{game['id']}/abandon", headers=player).json()
    assert abandoned["status"] == "abandoned" and abandoned["legal_moves"] == []
    again = client.post(f"/v1/games/{game['id']}/moves", json={"type": "draw"}, headers=player)
    assert again.status_code == 409 and again.json()["code"] == "game_over"


def test_players_cannot_see_each_others_games(client: Client, player: dict[str, str]) -> None:
    game = _doc_game(client, player)
    other = new_player(client)
    url = f"/v1/games/{game['id']}"
    for response in (
        client.get(url, headers=other),
        client.post(f"{url}/moves", json={"type": "draw"}, headers=other),
        client.get(f"{url}/record", headers=other),
    ):
        assert response.status_code == 404 and response.json()["code"] == "game_not_found"
    assert client.get(url, headers=player).json()["moves"] == 0
    client.post(f"{url}/moves", json={"type": "draw"}, headers=player)  # the service now keeps the game as saved
    for response in (
        client.post(f"{url}/moves", json={"type": "draw"}, headers=other),
        client.post(f"{url}/taps", json={"target": "stock"}, headers=other),
        client.post(f"{url}/abandon", headers=other),
    ):
        assert response.status_code == 404 and response.json()["code"] == "game_not_found"
    after = client.get(url, headers=player).json()
    assert (after["version"], after["moves"], after["status"]) == (1, 1, "in_progress")


def test_deals_are_public(client: Client) -> None:
    deal = client.get("/v1/deals/PY1-N-AAAAAAS").json()
    assert deal == {**DealCode.parse("PY1-N-AAAAAAS").to_json(), "par": None, "par_status": "pending"}
    bad = client.get("/v1/deals/PY1-N-AAAAAAAAA")
    assert bad.status_code in (400, 404, 422)
    rules = client.get("/v1/rules", headers={"Accept-Language": "en"}).json()
    assert [p["segment"] for p in rules["presets"]] == ["N", "2S", "0W"]
    assert rules["presets"][0]["name"] == "The app's rules"
    assert {v["key"] for v in rules["variants"]} == {"recycles", "stock_waste_pairs", "cover_pairs", "strict_win"}


def test_a_layout_from_the_deal_endpoint_is_accepted_back(client: Client, player: dict[str, str]) -> None:
    deal = client.get("/v1/deals/PY1-0W-QWERTYU").json()
    game = _layout_game(client, player, deal)
    assert game["code"] == "PY1-0W-QWERTYU"
    assert game["rules"]["recycles"] == 0 and game["rules"]["strict_win"] is True


def test_a_layout_whose_par_is_written_as_a_whole_float_is_accepted(client: Client, player: dict[str, str]) -> None:
    """JSON Schema's `integer` takes `16.0`: a client whose JSON writes numbers so (the fuzzer found one) must not
    get a 422 for the ignored par it sends back."""
    deal = {**client.get("/v1/deals/PY1-N-AAAAAAS").json(), "par": 16.0, "par_status": "known"}
    assert _layout_game(client, player, deal)["code"] == "PY1-N-AAAAAAS"
    refused = client.post("/v1/games", json={"layout": {**deal, "par": 16.5}}, headers=player)
    assert refused.status_code == 422 and refused.json()["errors"][0]["pointer"] == "/layout/par"


def test_player_settings_are_the_default_for_new_games(client: Client) -> None:
    player = new_player(client, locale="en", explain_errors=True)
    me = client.get("/v1/players/me", headers=player).json()
    assert me["locale"] == "en" and me["explain_errors"] is True
    game = _doc_game(client, player)
    covered = client.post(f"/v1/games/{game['id']}/taps", json={"card": "QC"}, headers=player).json()
    assert covered["feedback"]["message"] == "This card is covered by another card"
    changed = client.patch("/v1/players/me", json={"explain_errors": False}, headers=player).json()
    assert changed["explain_errors"] is False and changed["locale"] == "en"
    assert _doc_game(client, player)["explain_errors"] is False


def test_moves_by_notation_equal_parse_move(client: Client, player: dict[str, str]) -> None:
    game = _doc_game(client, player)
    pair = client.post(f"/v1/games/{game['id']}/moves", json={"type": "pair", "cards": ["kd", "KD"]}, headers=player)
    assert pair.status_code == 409 and pair.json()["code"] == "same_card"
    assert parse_move("KD").notation() == "KD"


def test_prometheus_metrics_count_requests(client: Client, player: dict[str, str]) -> None:
    """Per route template and status, under the names of Litestar's Prometheus plugin (dashboards keep working)."""
    labels = 'app_name="pyramide",method="{}",path="{}",status_code="{}"'
    created = "litestar_requests_total{" + labels.format("POST", "/v1/games", "201") + "}"
    missing = "litestar_requests_total{" + labels.format("GET", "/v1/games/{game_id}", "404") + "}"
    timed = "litestar_request_duration_seconds_count{" + labels.format("POST", "/v1/games", "201") + "}"
    running = "litestar_requests_in_progress{" + labels.format("POST", "/v1/games", "200") + "}"
    before = metric_values()
    client.post("/v1/games", json={}, headers=player)
    client.post("/v1/games", json={}, headers=player)
    client.get(f"/v1/games/{uuid.uuid4()}", headers=player)
    assert client.get("/metrics").status_code == 404, "not on the API's port (PYRAMIDE_METRICS_PORT)"
    after = metric_values()
    assert after[created] - before.get(created, 0) == 2 and after[timed] - before.get(timed, 0) == 2
    assert after[missing] - before.get(missing, 0) == 1
    assert after[running] == 0, "requests in progress go back down"
    assert not any(n.startswith("litestar_requests_error_total") and 'code="404"' in n for n in after), "5xx only"


def test_move_bodies_round_trip() -> None:
    adapter: TypeAdapter[MoveBody] = TypeAdapter(MoveBody)
    for notation in ("KD", "10C+3S", "D", "R", "U"):
        move = parse_move(notation)
        assert move_from_body(adapter.validate_python(move_body(move))) == move


def test_a_move_body_of_no_known_kind_is_refused_never_a_draw() -> None:
    """Issue 43: the body-to-move mapping fell through to a draw for anything it did not recognise."""
    with pytest.raises(DomainError) as refused:
        move_from_body(CardTap(card="QC"))
    assert refused.value.code is ErrorCode.VALIDATION_FAILED


def test_hints_come_from_the_solver(client: Client, player: dict[str, str]) -> None:
    game = _layout_game(client, player, DealCode.for_layout(easy_game().layout).to_json())
    hint = client.get(f"/v1/games/{game['id']}/hint", headers=player).json()
    assert hint["winnable"] is True and hint["max_removable"] == 28
    assert hint["move"] == hint["line"][0] and hint["move"] in game["legal_moves"]
    stuck = _layout_game(client, player, dead_end_start().code.to_json())
    answer = client.get(f"/v1/games/{stuck['id']}/hint", headers=player).json()
    assert answer["winnable"] is False and answer["max_removable"] == 24
    other = new_player(client)
    assert client.get(f"/v1/games/{game['id']}/hint", headers=other).status_code == 404


def test_a_deal_analysis_is_cached_per_code(client: Client, redis_client: Any) -> None:
    first = client.get("/v1/deals/py1-n-aaaaaas/analysis").json()
    assert first["code"] == "PY1-N-AAAAAAS" and first["winnable"] is True and first["max_removable"] == 28
    assert list(redis_client.scan_iter(match="pyr:{analysis:PY1-N-AAAAAAS}:*"))
    assert client.get("/v1/deals/PY1-N-AAAAAAS/analysis").json() == first


def test_winnable_only_deals_are_proven_winnable(client: Client, player: dict[str, str]) -> None:
    game = client.post("/v1/games", json={"winnable_only": True}, headers=player).json()
    assert solve(Game(DealCode.parse(game["code"]))).winnable is True


def test_winnable_only_is_timed_from_the_solvers_first_answer(
    client: Client, player: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A cold worker process may answer the first deal late; that is not time spent looking for a winnable deal.
    When no deal is proven winnable in the time after it, the answer is 409."""
    answers: list[bool] = []

    async def analyse(self: Solver, game: Game, budget: int = 0) -> Analysis:
        if not answers:
            await asyncio.sleep(self.time_limit_s * 1.5)  # a worker process starting
        answers.append(len(answers) == 1)  # the first deal is lost, the second won
        return _answer(answers[-1])

    monkeypatch.setattr(Solver, "analyse", analyse)
    created = client.post("/v1/games", json={"winnable_only": True}, headers=player)
    assert created.status_code == 201 and answers == [False, True]
    monkeypatch.setattr(Solver, "analyse", lambda self, game, budget=0: _lost())
    refused = client.post("/v1/games", json={"winnable_only": True}, headers=player)
    assert refused.status_code == 409 and refused.json()["code"] == "winnable_deal_not_found"


async def _lost() -> Analysis:
    await asyncio.sleep(0.05)
    return _answer(False)


def _answer(winnable: bool) -> Analysis:
    return Analysis(winnable=winnable, max_removable=None, line=[], states=0, elapsed_ms=0)


@pytest.mark.parametrize("code", ["PY1-2S-TXYCUHQ", "PY1-0-AAAAAAB", "PY1-N-AAAAAAS"])
def test_a_deal_analysis_gives_its_shortest_line_under_the_code_s_rules(settings: Settings, code: str) -> None:
    """`shortest=true` runs the A* in the worker, under the code's own rules, within the solver's time limit."""
    with TestClient(create_app(settings.but(solver={"time_limit_s": 20.0}))) as client:
        analysis = client.get(f"/v1/deals/{code}/analysis?shortest=true").json()
        plain = client.get(f"/v1/deals/{code}/analysis").json()
    expected = solve(Game(DealCode.parse(code)), shortest=True).shortest
    if expected is None:
        assert analysis["shortest"] is None and analysis["winnable"] is not True
        return
    assert analysis["shortest"] == [m.notation() for m in expected]
    replay = Game(DealCode.parse(code))
    for move in analysis["shortest"]:
        replay.play(parse_move(move))
    assert replay.is_won and plain["shortest"] is None, "asked for, and cached apart from the plain analysis"
