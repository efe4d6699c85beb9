"""The Redis commands a request sends, as MONITOR shows them, and how to keep background flushes out of them."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
import redis

from pyramide.service.infra import address_moves
from tests.support.waiting import eventually


@contextmanager
def client_commands(url: str) -> Iterator[list[str]]:
    """The commands that clients send to Redis while the block runs, as Redis's MONITOR shows them (commands run
    inside a script are left out: they are not round trips)."""
    seen: list[str] = []
    stop = "pyramide-monitor-stop"
    with redis.Redis.from_url(url).monitor() as monitor:  # type: ignore[no-untyped-call]
        thread = threading.Thread(target=_listen, args=(monitor, seen, stop), daemon=True)
        thread.start()
        watcher = redis.Redis.from_url(url)
        eventually(lambda: any(c.get("cmd") == "monitor" for c in watcher.client_list()), 5, what="MONITOR begun")
        try:
            yield seen
        finally:
            redis.Redis.from_url(url).echo(stop)
            thread.join(timeout=5)


_HANDSHAKE = frozenset({"HELLO", "CLIENT", "SELECT"})
"""What a connection sends once when it opens (the stop signal's own connection among them): not a request's."""


_BACKGROUND = ("pyr:{events}:", "pyr:*:outbox")
"""What the webhook delivery task polls and sweeps in every process (``events/delivery.py``): not a request's."""


def without_address_flushes(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every process adds the moves it served per address to Redis once a second, off the request path
    (``infra/address_moves.py``): an EVALSHA that lands in any window :func:`client_commands` watches, one time in
    a dozen or so. A test that counts a request's own commands calls this before its app starts: no flush comes."""
    monkeypatch.setattr(address_moves, "FLUSH_INTERVAL_S", 3600.0)


def _listen(monitor: Any, seen: list[str], stop: str) -> None:
    for event in monitor.listen():
        command = event["command"]
        if stop in command:
            return
        name = command.split(" ")[0].upper()
        if any(mark in command for mark in _BACKGROUND):
            continue
        if event.get("client_type") != "lua" and name not in _HANDSHAKE:
            seen.append(name)
