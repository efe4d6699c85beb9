"""The contract as a TypeScript developer meets it (issue 44, item 4): types from openapi-typescript (called with
openapi-fetch) and an SDK from @hey-api/openapi-ts, generated with their default options from the committed schema
with no warning, compiled by ``tsc --strict`` with no error, and run by Node against a live server: each creates a
player with only its language, renames it with a PATCH of only its name, deals without a body and under partial rules
(keys that have a default must type as optional), reads a refused move as the typed Problem, and wins a whole game
with If-Match. The programs are in ``ts/``; the Node tools are the pinned ones in ``tools/node`` (``scripts/setup.sh``
installs them)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from pyramide.engine import DealCode, RemoveKing, RemovePair
from pyramide.engine.cards import card_code
from pyramide.engine.moves import Move, parse_record
from pyramide.service.http.openapi import COMMITTED
from tests.support.layouts import EASY_CLEARING, easy_game

PROGRAMS = Path(__file__).with_name("ts")
TOOLS = COMMITTED.parents[1] / "tools" / "node" / "node_modules"
QUIET = {**os.environ, "NO_COLOR": "1", "DO_NOT_TRACK": "1", "SCARF_ANALYTICS": "false", "NO_UPDATE_NOTIFIER": "1"}
"""No colours in what is searched for warnings, and no telemetry or update check (the tests reach only loopback)."""


def _run(*command: str | Path, cwd: Path) -> str:
    """``command`` from the pinned tools, which must succeed and warn of nothing: its whole output."""
    done = subprocess.run(
        [str(part) for part in command], cwd=cwd, env=QUIET, capture_output=True, text=True, timeout=120, check=False
    )
    output = done.stdout + done.stderr
    assert done.returncode == 0, output
    assert not re.search(r"warn|deprecat", output, re.IGNORECASE), output
    return output


@pytest.fixture(scope="module")
def compiled(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Both clients generated from ``openapi/openapi.json`` beside the programs, compiled: the folder of the
    JavaScript."""
    if shutil.which("node") is None or not (TOOLS / ".bin" / "tsc").exists():
        pytest.fail("no Node tools: scripts/setup.sh installs them into tools/node (needs node and npm)")
    folder = tmp_path_factory.mktemp("ts")
    for program in PROGRAMS.iterdir():
        shutil.copy(program, folder)
    (folder / "node_modules").symlink_to(TOOLS, target_is_directory=True)
    bin_ = TOOLS / ".bin"
    _run(bin_ / "openapi-typescript", COMMITTED, "--output", folder / "generated" / "schema.d.ts", cwd=folder)
    _run(bin_ / "openapi-ts", "--input", COMMITTED, "--output", folder / "generated" / "hey", cwd=folder)
    assert _run(bin_ / "tsc", "--strict", "--noEmit", "false", "-p", folder / "tsconfig.json", cwd=folder) == ""
    return folder / "out"


def _body(move: Move) -> dict[str, Any]:
    if isinstance(move, RemoveKing):
        return {"type": "king", "card": card_code(move.card)}
    if isinstance(move, RemovePair):
        return {"type": "pair", "cards": [card_code(c) for c in move.cards]}
    return {"type": "draw"}


@pytest.mark.parametrize("program", ["openapi_typescript", "hey_api"])
@pytest.mark.slow
def test_a_generated_typescript_client_plays_a_whole_game(compiled: Path, live_url: str, program: str) -> None:
    moves = parse_record(EASY_CLEARING)
    plan = {
        "code": str(DealCode.for_layout(easy_game().layout)),
        "moves": [_body(move) for move in moves],
        "illegal": {"type": "king", "card": "AD"},
    }
    done = subprocess.run(
        ["node", str(compiled / f"{program}.js"), live_url, json.dumps(plan)],
        env=QUIET, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    outcome = json.loads(done.stdout.splitlines()[-1])
    assert outcome["player"] == {"locale": "en", "name": "Tessa"}
    assert outcome["partialRules"] == {"recycles": None, "stock_waste_pairs": False, "cover_pairs": True,
                                       "strict_win": False}  # fmt: skip
    assert (outcome["randomStatus"], outcome["randomCards"]) == ("in_progress", 28)
    assert outcome["problem"] == {"status": 409, "code": "not_a_king", "type": "/problems/not_a_king"}
    assert outcome["status"] == "won" and outcome["etags"] == len(moves)
    assert outcome["record"] == EASY_CLEARING
