"""Daily challenges' ids and hours, and the presets setting."""

from __future__ import annotations

from datetime import date

import pytest
from pydantic import ValidationError

from pyramide.service.challenges.calendar import ChallengeId, moment
from pyramide.service.infra.settings import Challenges


def test_an_id_names_a_utc_day_and_a_canonical_preset() -> None:
    challenge = ChallengeId.parse("2026-12-01-2S")
    assert challenge == ChallengeId(date(2026, 12, 1), "2S") and str(challenge) == "2026-12-01-2S"
    assert moment(challenge.opens_ms).isoformat() == "2026-12-01T00:00:00+00:00"
    assert moment(challenge.closes_ms).isoformat() == "2026-12-02T00:00:00+00:00"
    assert challenge.is_open(challenge.opens_ms) and not challenge.is_open(challenge.closes_ms)
    assert challenge.identity(3) == "2026-12-01/2S#3"
    assert challenge.next_day() == ChallengeId(date(2026, 12, 2), "2S")
    for text in ("2026-12-01-S2", "2026-02-30-N", "2026-12-01-n", "2026-12-01-", "2026-12-01-NN", "x"):
        assert ChallengeId.parse(text) is None, text


def test_the_presets_setting_takes_canonical_segments_with_n_among_them() -> None:
    assert Challenges(presets="N, 2S,0W").presets == ("N", "2S", "0W")
    for wrong in ("2S", "N,s2", "N,XYZ"):
        with pytest.raises(ValidationError):
            Challenges(presets=wrong)
