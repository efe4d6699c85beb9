"""The easy deal every API test plays: its code and the moves that clear it, as request bodies."""

from __future__ import annotations

from pyramide.engine import DealCode
from pyramide.engine.moves import parse_record
from pyramide.service.games.commands_controller import move_body
from tests.support.layouts import EASY_CLEARING, easy_game

EASY_CODE = str(DealCode.for_layout(easy_game().layout))


WINNING = [move_body(m) for m in parse_record(EASY_CLEARING)]
