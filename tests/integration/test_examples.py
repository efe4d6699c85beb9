"""The examples README points to run as documented."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from pyramide.service.infra.settings import Settings
from tests.support.serving import _free_port
from tests.support.waiting import eventually
from tests.support.webhooks import abandon, as_user, new_app, register, service

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


def test_the_webhook_receiver_example_verifies_a_real_delivery(settings: Settings) -> None:
    """docs/quickstart.md's endpoint (``examples/webhook_receiver.py``, the standard library alone) verifies what the
    service sends: a real process on loopback, registered through HTTP, printing the event it verified."""
    port = _free_port()
    with service(settings) as client:
        key = new_app(client)
        secret = register(client, key, f"http://127.0.0.1:{port}/hook", ["game.abandoned"])["secret"]
        command = [sys.executable, str(ROOT / "examples" / "webhook_receiver.py"), "--secret", secret]
        receiver = subprocess.Popen([*command, "--port", str(port)], stdout=subprocess.PIPE, text=True)
        lines: list[str] = []
        reader = threading.Thread(target=lambda: lines.extend(receiver.stdout or ()), daemon=True)
        reader.start()
        try:
            eventually(lambda: _listening(port), 20, what="the example receiver listening")
            game = abandon(client, as_user(key, "user-1"))
            eventually(lambda: len(lines) >= 1, 20, what="a line from the example receiver")
        finally:
            receiver.terminate()
            receiver.wait(timeout=10)
    event = json.loads(lines[0])
    assert event["type"] == "game.abandoned" and event["data"]["game_id"] == game


def _listening(port: int) -> bool:
    with socket.socket() as probe:
        return probe.connect_ex(("127.0.0.1", port)) == 0
