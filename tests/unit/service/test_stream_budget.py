"""The live streams' budget: past it the oldest streams are told to end, the share follows the connections a process
keeps, and a budget that would leave the API no connection is refused at start."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from pyramide.service.http.connection_limits import connection_bounds, streams_per_process
from pyramide.service.http.stream_budget import RETRY_MS, StreamBudget, end_with_retry
from pyramide.service.infra.meters import process_meters
from pyramide.service.infra.settings import HttpSettings, Settings, settings_errors


def test_a_stream_past_the_budget_ends_the_oldest_and_never_a_newer_one() -> None:
    budget = StreamBudget(2, process_meters())
    first, second = budget.enter("a"), budget.enter("b")
    assert not first.is_set() and len(budget) == 2
    third = budget.enter("c")
    assert first.is_set() and not second.is_set() and not third.is_set() and len(budget) == 2
    budget.leave("a")  # the ended stream leaves when it has sent its end: it no longer counted
    budget.leave("b")
    assert not budget.enter("d").is_set() and not third.is_set(), "room was left: nobody ended"


def test_a_stream_ended_early_says_when_to_come_back_and_its_last_id() -> None:
    assert end_with_retry(41) == b"retry: %d\nid: 41\n\n" % RETRY_MS
    assert end_with_retry(None) == b"retry: %d\n\n" % RETRY_MS, "no id sent yet: none to repeat"


def test_the_streams_share_is_half_the_connections_unless_set_and_follows_the_file_limit() -> None:
    assert HttpSettings().stream_share == 2048 and HttpSettings(max_streams=100).stream_share == 100
    kept = connection_bounds(4096)[0]  # fewer than 4096 under a low file limit
    assert streams_per_process(HttpSettings()) == kept // 2
    assert streams_per_process(HttpSettings(max_connections=64, max_streams=63)) == connection_bounds(64)[0] * 63 // 64


@pytest.mark.parametrize("streams", [32, 33])
def test_a_budget_that_would_take_every_connection_is_refused_naming_its_variable(streams: int) -> None:
    with pytest.raises(ValidationError) as refused:
        Settings(http={"max_connections": 32, "max_streams": streams})
    (line,) = settings_errors(refused.value)
    assert line.startswith("PYRAMIDE_MAX_STREAMS: below PYRAMIDE_MAX_CONNECTIONS (32)"), line
