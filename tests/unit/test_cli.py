"""The pyramide command as a person runs it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from pyramide.cli import main
from pyramide.engine import DealCode, Game, parse_move


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    status = main(list(args))
    out, err = capsys.readouterr()
    return status, out, err


def test_deal_json_has_the_promised_shape(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = _run(capsys, "deal", "PY1-N-AAAAAAS", "--json")
    data = json.loads(out)
    assert status == 0
    assert list(data) == ["code", "rules", "pyramid", "waste", "stock"]
    assert data["code"] == "PY1-N-AAAAAAS"
    assert data["rules"] == {"recycles": None, "stock_waste_pairs": False, "cover_pairs": False, "strict_win": False}
    assert [len(row) for row in data["pyramid"]] == [1, 2, 3, 4, 5, 6, 7]
    assert len(data["waste"]) == 1 and len(data["stock"]) == 23
    assert data == DealCode.parse("PY1-N-AAAAAAS").to_json()


def test_the_json_is_accepted_back_as_a_layout(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    _, out, _ = _run(capsys, "deal", "PY1-2S-QWERTYU", "--json")
    path = tmp_path / "layout.json"
    path.write_text(out)
    _, again, _ = _run(capsys, "deal", "--layout", str(path), "--json")
    assert json.loads(again) == json.loads(out)
    data = json.loads(out)
    data["stock"].reverse()
    path.write_text(json.dumps(data))
    _, edited, _ = _run(capsys, "deal", "--layout", str(path), "--json")
    assert json.loads(edited)["code"].startswith("PY1-2S-L")
    assert json.loads(edited)["stock"] == data["stock"]


def test_the_drawing_shows_the_pyramid(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = _run(capsys, "deal", "py1-n-aaaaaas")
    lines = out.splitlines()
    assert status == 0
    assert lines[0].startswith("PY1-N-AAAAAAS")
    assert lines[2].strip() == "A♦"
    assert lines[8].split() == ["5♦", "K♣", "2♠", "J♥", "3♦", "10♥", "A♠"]


def test_rules_override_and_random_deals(capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = _run(capsys, "deal", "PY1-N-AAAAAAS", "--rules", "2S", "--json")
    assert json.loads(out)["code"] == "PY1-2S-AAAAAAS"
    _, out, _ = _run(capsys, "deal", "--rules", '{"recycles": 0, "strict_win": true}', "--json")
    assert DealCode.parse(json.loads(out)["code"]).rules.segment == "0W"


@pytest.mark.parametrize(
    "args", [("deal", "PY1-N-AAAAAA"), ("deal", "--rules", "X"), ("deal", "--layout", "/nonexistent.json")]
)
def test_bad_input_is_a_clear_error(capsys: pytest.CaptureFixture[str], args: tuple[str, ...]) -> None:
    status, out, err = _run(capsys, *args)
    assert status == 2 and out == ""
    assert err.startswith("pyramide: ")


def test_the_command_runs_as_a_program() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "pyramide", "deal", "PY1-N-AAAAAAS", "--json"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert json.loads(done.stdout)["code"] == "PY1-N-AAAAAAS"


def test_solve_prints_the_promised_json(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = _run(capsys, "solve", "PY1-N-AAAAAAS", "--json")
    data = json.loads(out)
    assert status == 0
    assert {"winnable", "max_removable", "line", "states", "elapsed_ms"} <= set(data)
    game = Game(DealCode.parse("PY1-N-AAAAAAS"))
    for notation in data["line"]:
        game.play(parse_move(notation))
    assert game.is_won == data["winnable"]


def test_solve_in_words(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = _run(capsys, "solve", "PY1-0-AAAAAAB", "--shortest")
    assert status == 0
    assert out.splitlines()[0] == "PY1-0-AAAAAAB: not winnable; at most 17 pyramid cards removable"
