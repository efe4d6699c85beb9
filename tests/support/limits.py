"""The limits, quotas and caps the integration tests run under."""

from __future__ import annotations

from typing import Any

from pyramide.service.infra.settings import LimitName, Quotas

TEST_LIMITS: dict[str, Any] = {
    "limits": {
        "per_minute": dict.fromkeys(LimitName, 100_000),
        "per_day": dict.fromkeys(Quotas.model_fields, 1_000_000),
    },
    "caps": {"max_unfinished_games": 100_000},
    "challenges": {"min_move_ms": 0, "min_line_move_ms": 0, "screen_worlds": 0, "days_ahead": 0},
}
"""Limits, quotas and caps the tests' bursts do not reach (they run far faster than a person, from one address; so
their challenge wins rank at once, with neither a review nor the screening); tests of the limits and of fair play
set their own. No challenge is chosen
ahead in the background (every test's app would solve sixteen on its fresh Redis); tests of commitments set 7."""
