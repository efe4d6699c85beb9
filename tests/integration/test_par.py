"""A deal's par (issue 46): the length of its shortest winning line, worked out off the request path and shown by
``GET /v1/deals/{code}`` once known, through HTTP on a real server over the embedded Redis."""

from __future__ import annotations

import time
from typing import Any

import httpx

WON = "PY1-N-AAAAAAB"  # its shortest line is found in about 15 ms of one core
LOST = "PY1-0W-AAAALSP"  # proved unwinnable in a few milliseconds
POLL_S = 20.0


def _until_decided(client: httpx.Client, code: str) -> dict[str, Any]:
    """The deal as served once its par is no longer pending, read at most for ``POLL_S``."""
    deadline = time.monotonic() + POLL_S
    while time.monotonic() < deadline:
        body: dict[str, Any] = client.get(f"/v1/deals/{code}").json()
        if body["par_status"] != "pending":
            return body
        time.sleep(0.05)
    raise AssertionError(f"the par of {code} was still pending after {POLL_S} s")


def test_a_deals_par_appears_once_worked_out_and_is_its_shortest_line(live_url: str) -> None:
    """The first read answers at once with the par pending; a later read carries the par, which is the number of
    moves of the shortest winning line the public analysis gives, and that line wins when played."""
    with httpx.Client(base_url=live_url, timeout=10) as client:
        first = client.get(f"/v1/deals/{WON}")
        assert first.status_code == 200
        assert (first.json()["par"], first.json()["par_status"]) == (None, "pending")
        decided = _until_decided(client, WON)
        shortest = client.get(f"/v1/deals/{WON}/analysis", params={"shortest": "true"}).json()["shortest"]
        assert decided["par_status"] == "known"
        assert decided["par"] == len(shortest) == 64
        assert decided["pyramid"] == first.json()["pyramid"]
        again = client.get(
            f"/v1/deals/{WON}", headers={"If-None-Match": client.get(f"/v1/deals/{WON}").headers["ETag"]}
        )
        assert again.status_code == 304


def test_a_lost_deal_says_so_with_a_null_par(live_url: str) -> None:
    with httpx.Client(base_url=live_url, timeout=10) as client:
        decided = _until_decided(client, LOST)
        assert (decided["par"], decided["par_status"]) == (None, "unwinnable")
        assert client.get(f"/v1/deals/{LOST}/analysis").json()["winnable"] is False
