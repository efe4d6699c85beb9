"""The contract as a client developer meets it: a Python client generated from the committed schema by
openapi-python-client (with no warning), used over real HTTP to create a player, deal without a body, read a
refused move as the typed problem, and win a whole game (issue 44, item 4)."""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from litestar import Litestar

from pyramide.engine import DealCode, RemoveKing, RemovePair
from pyramide.engine.cards import card_code
from pyramide.engine.moves import parse_record
from pyramide.service.http.openapi import COMMITTED
from tests.support.layouts import EASY_CLEARING, easy_game
from tests.support.serving import serve_in_thread

GENERATOR = Path(sys.executable).with_name("openapi-python-client")


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """The client package, generated into a fresh folder and imported."""
    folder = tmp_path_factory.mktemp("client")
    env = {**os.environ, "PATH": f"{GENERATOR.parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    done = subprocess.run(
        [GENERATOR, "generate", "--path", COMMITTED, "--meta", "none", "--output-path", folder / "pyramide_client"],
        capture_output=True, text=True, env=env, timeout=300, check=False,
    )  # fmt: skip
    output = done.stdout + done.stderr
    assert done.returncode == 0 and "Warning" not in output, output
    sys.path.insert(0, str(folder))
    try:
        yield importlib.import_module("pyramide_client")
    finally:
        sys.path.remove(str(folder))
        for name in [n for n in sys.modules if n.split(".")[0] == "pyramide_client"]:
            del sys.modules[name]


def test_a_generated_client_plays_a_whole_game(generated: Any, app: Litestar) -> None:
    api = importlib.import_module("pyramide_client.api.games.play_move")
    create_game = importlib.import_module("pyramide_client.api.games.create_game")
    get_record = importlib.import_module("pyramide_client.api.games.get_game_record")
    create_player = importlib.import_module("pyramide_client.api.players.create_player")
    get_stats = importlib.import_module("pyramide_client.api.statistics.get_player_stats")
    models = importlib.import_module("pyramide_client.models")
    with serve_in_thread(app) as url:
        anonymous = generated.Client(base_url=url)
        assert create_player.sync_detailed(client=anonymous).status_code == 201  # no body: the defaults
        english = models.CreatePlayerBody(locale=models.CreatePlayerBodyLocale.EN)
        created = create_player.sync_detailed(client=anonymous, body=english)
        assert created.status_code == 201 and created.headers["location"] == "/v1/players/me"
        client = generated.AuthenticatedClient(base_url=url, token=created.parsed.token)
        random = create_game.sync_detailed(client=client)
        assert random.status_code == 201, random.content
        assert random.parsed.status == models.GameStatus.IN_PROGRESS and len(random.parsed.pyramid) == 28
        code = str(DealCode.for_layout(easy_game().layout))
        dealt = create_game.sync_detailed(client=client, body=models.CreateGameBody(code=code))
        assert dealt.status_code == 201, dealt.content
        game, etag = dealt.parsed.id, dealt.headers["etag"]
        refused = api.sync_detailed(game, client=client, body=models.KingMove(card="AD", type_="king"), if_match=etag)
        assert refused.status_code == 409, refused.content
        assert isinstance(refused.parsed, models.Problem), refused.parsed
        assert refused.parsed.code == models.ProblemCode.NOT_A_KING and refused.parsed.status == 409
        assert refused.parsed.type_ == "/problems/not_a_king" and refused.headers["content-language"] == "en"
        for move in parse_record(EASY_CLEARING):
            if isinstance(move, RemoveKing):
                body = models.KingMove(card=card_code(move.card), type_="king")
            elif isinstance(move, RemovePair):
                body = models.PairMove(cards=[card_code(c) for c in move.cards], type_="pair")
            else:
                body = models.DrawMove(type_="draw")
            played = api.sync_detailed(game, client=client, body=body, if_match=etag)
            assert played.status_code == 200, played.content
            etag = played.headers["etag"]
            assert played.headers["content-language"] == "en"
        assert played.parsed.status == models.GameStatus.WON
        record = get_record.sync_detailed(game, client=client)
        assert record.parsed.record == EASY_CLEARING
        stats = get_stats.sync_detailed(client=client)
        assert (stats.parsed.played, stats.parsed.won) == (1, 1)
