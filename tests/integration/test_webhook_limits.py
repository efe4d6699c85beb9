"""Webhook delivery that one slow app or one silent name server cannot hold up (issue 47): real receivers on loopback,
the service in process or a real ``pyramide serve`` in a mount namespace of its own whose ``/etc/resolv.conf`` names a
name server on loopback that this test binds and that stops answering."""

from __future__ import annotations

import contextlib
import json
import os
import random
import shutil
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

import httpx
import psutil
import pytest

from pyramide.service.infra.settings import LimitName, Settings, as_environment
from tests.support.operators import OPERATOR_KEY
from tests.support.serving import Served, _free_port, _wait_ready
from tests.support.waiting import eventually
from tests.support.webhook_games import _abandon, _started_games
from tests.support.webhooks import bearer, new_app, receiving, register, service

_BURST = (LimitName.ADDRESS_GAMES, LimitName.ADDRESS_MOVES, LimitName.ADDRESS_KEYED_MOVES)
LIFTED: dict[str, Any] = {
    "limits": {
        "per_minute": dict.fromkeys((LimitName.GAMES, LimitName.MOVES, *_BURST), 0),
        "app_per_minute": dict.fromkeys(_BURST, 0),
    }
}
"""The request limits a test's burst of games from one address would reach (0: off)."""


def test_a_slow_app_with_many_players_holds_no_other_apps_deliveries(settings: Settings) -> None:
    """App A's endpoint answers only after 12 s (the timeout is 10 s); 70 of its players abandon a game at once, more
    than a process's 64 outboxes in work. App B's player then abandons one: B's fast endpoint gets it within 1 s
    (before, A's deliveries held every slot and B's waited for A's timeouts), while A's endpoint has at most 16 (its
    bound) in flight; A's deliveries that found no slot were not attempted (no `busy` failure in its log, no attempt
    counted against their schedule)."""
    with service(settings, **LIFTED, webhooks={"timeout_s": 10}) as client, receiving(delay_s=12) as slow, \
            receiving() as fast:  # fmt: skip
        key_a, key_b = new_app(client), new_app(client)
        endpoint_a = register(client, key_a, slow.url, ["game.abandoned"])
        register(client, key_b, fast.url, ["game.abandoned"])
        games_a = _started_games(client, key_a, 70)
        [game_b] = _started_games(client, key_b, 1)
        _abandon(client, games_a)
        slow.wait(16, seconds=3)
        _abandon(client, [game_b])
        started = time.monotonic()
        fast.wait(1, seconds=3.5)
        assert time.monotonic() - started < 1.0, f"B's event took {time.monotonic() - started:.2f} s"
        assert json.loads(fast.got[0][1])["data"]["game_id"] == game_b[1]
        assert len(slow.got) <= 16, f"{len(slow.got)} deliveries to the slow app's endpoint at once"
        log = client.get(f"/v1/apps/me/webhooks/{endpoint_a['id']}/deliveries?limit=100", headers=bearer(key_a))
        assert [e for e in log.json()["entries"] if e["last_error"] == "busy" or e["attempts"] > 1] == []


class SilentNameServer:
    """A name server on a loopback address, UDP port 53: while ``answering`` it answers every A question of
    ``name`` with 127.0.0.1 (and every other question with no address); then it reads the questions and answers
    none. It counts the questions it was asked."""

    def __init__(self, name: str) -> None:
        self.name, self.answering, self.asked = name, True, 0
        self.socket = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        for _ in range(50):
            self.address = f"127.0.{random.randint(1, 250)}.{random.randint(2, 250)}"
            try:
                self.socket.bind((self.address, 53))
                break
            except OSError:
                continue
        else:
            raise RuntimeError("no free loopback address for the name server")
        self.socket.settimeout(0.2)
        self.running = True
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while self.running:
            try:
                query, sender = self.socket.recvfrom(512)
            except TimeoutError:
                continue
            except OSError:
                return
            self.asked += 1
            if self.answering:
                self.socket.sendto(self._answer(query), sender)

    def _answer(self, query: bytes) -> bytes:
        """The answer to ``query`` (one question): RFC 1035's header, the question, and an A record if asked."""
        end = 12
        while query[end] != 0:
            end += query[end] + 1
        question = query[12 : end + 5]
        kind = int.from_bytes(query[end + 1 : end + 3], "big")
        labels, at = [], 12
        while query[at] != 0:
            labels.append(query[at + 1 : at + 1 + query[at]].decode())
            at += query[at] + 1
        asked = ".".join(labels)
        records = b""
        if kind == 1 and asked == self.name:
            records = b"\xc0\x0c" + (1).to_bytes(2, "big") + (1).to_bytes(2, "big") + (5).to_bytes(4, "big")
            records += (4).to_bytes(2, "big") + bytes([127, 0, 0, 1])
        flags = b"\x81\x80"
        counts = (1).to_bytes(2, "big") + (1 if records else 0).to_bytes(2, "big") + b"\x00\x00\x00\x00"
        return query[:2] + flags + counts + question + records

    def close(self) -> None:
        self.running = False
        self.socket.close()


@contextmanager
def serving_in_namespace(tmp: Path, resolv: Path, hosts: Path, env: dict[str, str]) -> Iterator[Served]:
    """A real ``pyramide serve`` (one worker) in a mount namespace of its own, where ``/etc/resolv.conf`` and
    ``/etc/hosts`` are the given files; killed with its family at the end."""
    port = _free_port()
    log = tmp / f"serve-{port}.log"
    command = " ".join(
        [sys.executable, "-m", "pyramide", "serve", "--port", str(port), "--data-dir", str(tmp / "data"),
         "--workers", "1"]
    )  # fmt: skip
    script = f"mount --bind {resolv} /etc/resolv.conf && mount --bind {hosts} /etc/hosts && exec {command}"
    environment = {**os.environ, "PYRAMIDE_SOLVER_TIME_LIMIT_S": "1", **env}
    with log.open("w") as out:
        process = subprocess.Popen(
            ["unshare", "-m", "sh", "-c", script], env=environment, stdout=out, stderr=subprocess.STDOUT, text=True
        )
    served = Served(process, f"http://127.0.0.1:{port}", tmp / "data", log)
    try:
        _wait_ready(served)
        yield served
    finally:
        for each in served.family() if process.poll() is None else []:
            with suppress(psutil.NoSuchProcess):
                each.kill()
        process.wait(timeout=10)


@pytest.mark.skipif(shutil.which("unshare") is None or os.geteuid() != 0, reason="needs unshare and root")
def test_a_silent_name_server_holds_no_other_apps_deliveries(tmp_path: Path) -> None:
    """In the server's own mount namespace, DNS is a name server on loopback that answers while app A registers
    `http://hook.blackhole.test:PORT/hook`, then falls silent (30 s a try, 3 tries). A's 12 players abandon a game
    each: 12 deliveries wait on that host's lookup. App B's endpoint, on a name from /etc/hosts (no DNS), then gets
    its player's event within 1 s (before, A's lookups held every thread of the loop's default executor for
    90 s, and B's lookup waited behind them past its timeout); A's deliveries end as `timeout`, each within the
    timeout, and the name server is asked no more often than one shared lookup asks."""
    name = "hook.blackhole.test"
    dns = SilentNameServer(name)
    resolv, hosts = tmp_path / "resolv.conf", tmp_path / "hosts"
    resolv.write_text(f"nameserver {dns.address}\noptions timeout:30 attempts:3\n")
    hosts.write_text("127.0.0.1 localhost\n127.0.0.1 fast.hosts.test\n")
    env = {
        "PYRAMIDE_OPERATOR_KEY": OPERATOR_KEY,
        "PYRAMIDE_WEBHOOK_ALLOW_LOOPBACK": "true",
        "PYRAMIDE_WEBHOOK_TIMEOUT_S": "2",
        **as_environment(LIFTED),
    }
    try:
        with receiving() as slow, receiving() as fast, serving_in_namespace(tmp_path, resolv, hosts, env) as served:
            http = httpx.Client(base_url=served.url, timeout=10)
            key_a, key_b = new_app(http), new_app(http)
            endpoint_a = register(http, key_a, f"http://{name}:{slow.port}/hook", ["game.abandoned"])
            register(http, key_b, f"http://fast.hosts.test:{fast.port}/hook", ["game.abandoned"])
            dns.answering = False
            games_a = _started_games(http, key_a, 12)
            [game_b] = _started_games(http, key_b, 1)
            asked = dns.asked
            _abandon(http, games_a)
            eventually(lambda: dns.asked > asked, 5)  # A's deliveries are waiting on the silent name server
            _abandon(http, [game_b])
            started = time.monotonic()
            fast.wait(1, seconds=3)
            assert time.monotonic() - started < 1.0, f"B's event took {time.monotonic() - started:.2f} s"
            assert json.loads(fast.got[0][1])["data"]["game_id"] == game_b[1]

            def logged() -> list[dict[str, Any]]:
                log = http.get(f"/v1/apps/me/webhooks/{endpoint_a['id']}/deliveries?limit=50", headers=bearer(key_a))
                found: list[dict[str, Any]] = log.json()["entries"]
                return found

            # an attempt waits for a slot and then runs, each within the timeout
            with contextlib.suppress(AssertionError):
                eventually(lambda: len(logged()) >= 12, 5)
            entries = logged()
            errors = {e["last_error"] for e in entries}
            assert len(entries) == 12 and "timeout" in errors and errors == {"timeout"}, entries
            assert slow.got == []
            assert dns.asked - asked <= 4, f"{dns.asked - asked} questions for one host: lookups were not shared"
            started = time.monotonic()
            english = {**bearer(key_a), "Accept-Language": "en"}
            other = http.post("/v1/apps/me/webhooks", json={"url": f"http://other.{name}/hook",
                              "events": ["game.won"]}, headers=english)  # fmt: skip
            assert other.status_code == 422 and "does not resolve" in other.json()["detail"], other.text
            assert time.monotonic() - started < 4, "a registration waited on the silent name server past its timeout"
    finally:
        dns.close()
