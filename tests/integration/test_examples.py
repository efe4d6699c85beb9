"""The examples README points to run as documented."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_the_leaderboard_example_fills_a_board_through_http() -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "leaderboard.py")], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    table = done.stdout.split("rank  player")[1].split("\n\n")[0].strip().splitlines()[1:]
    # Ana's second game has no pauses; the others pause 10, 30 and 80 ms a move: clean wins first (Ana, then the
    # slow Dani), then the assisted ones (Bence undid draws, Csilla took a hint), each tier by time
    assert [line.split()[1] for line in table] == ["Ana", "Dani", "Bence", "Csilla"]
    assert [line.split()[6] for line in table] == ["clean", "clean", "assisted", "assisted"]
    bence = next(line.split() for line in table if line.split()[1] == "Bence")
    csilla = next(line.split() for line in table if line.split()[1] == "Csilla")
    assert bence[4] == "3" and csilla[5] == "1"  # undos and hints shown
