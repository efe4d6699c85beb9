"""Requests refused while a dependency is down: one warning for a run of refusals, a new one after a quiet gap."""

from __future__ import annotations

import logging

import pytest

from pyramide.service.infra.outage import RefusalLog


def test_a_run_of_refusals_warns_once_and_a_run_after_a_quiet_gap_warns_again(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="test.refusals")
    refusals = RefusalLog("redis", logging.getLogger("test.refusals"), quiet_s=10.0)
    for now in (100.0, 100.5, 109.0, 118.9):  # each within 10 s of the one before: one run
        refusals.refused(ConnectionError("down"), now)
    refusals.refused(ConnectionError("down"), 129.0)  # 10.1 s after the last: a new run
    levels = [r.levelno for r in caplog.records]
    assert levels == [logging.WARNING, logging.DEBUG, logging.DEBUG, logging.DEBUG, logging.WARNING]
    assert caplog.records[0].getMessage().startswith("redis unreachable: ConnectionError: down (requests are")
