"""Snapshots: what a client sees of a stored game, in one pydantic model for every game response."""

from __future__ import annotations

import time
from datetime import UTC, datetime

from pyramide.engine import Feedback as EngineFeedback
from pyramide.engine import card_code
from pyramide.engine.messages import Locale
from pyramide.service.schemas import (
    Feedback,
    RecyclesState,
    RulesBody,
    Slot,
    Snapshot,
    Stock,
    Waste,
)
from pyramide.service.stored_game import StoredGame


def now_ms() -> int:
    return int(time.time() * 1000)


def _time(ms: int | None) -> datetime | None:
    return None if ms is None else datetime.fromtimestamp(ms / 1000, UTC)


def _code(card: int | None) -> str | None:
    return None if card is None else card_code(card)  # type: ignore[arg-type]


def elapsed_ms(stored: StoredGame, now: int) -> int | None:
    """Server time from the first move to the win (or the end, or now)."""
    if stored.first_move_ms is None:
        return None
    return max(0, (stored.finished_ms or now) - stored.first_move_ms)


def snapshot(stored: StoredGame, locale: Locale, feedback: EngineFeedback | None = None) -> Snapshot:
    game = stored.game
    finished = stored.finished
    return Snapshot(
        id=stored.id,
        code=str(game.code),
        rules=RulesBody(**game.rules.to_json()),
        version=stored.version,
        status=stored.status,  # type: ignore[arg-type]
        score=game.score,
        moves=game.moves,
        elapsed_ms=elapsed_ms(stored, now_ms()),
        pyramid=[Slot(row=r, col=c, card=_code(card), free=free) for r, c, card, free in game.slot_views()],
        waste=Waste(count=len(game.waste), top=_code(game.waste_top), cards=[card_code(c) for c in game.waste]),
        stock=Stock(count=len(game.stock)),
        selected=_code(game.selection),
        undo_available=0 if stored.abandoned else game.undo_available,
        recycles=RecyclesState(used=game.recycles_used, left=game.recycles_left),
        legal_moves=[] if finished else [m.notation() for m in game.legal_moves()],
        explain_errors=game.explain_errors,
        feedback=None
        if feedback is None
        else Feedback(code=feedback.code, message=feedback.message(locale, game.explain_errors)),
        created_at=_time(stored.created_ms),  # type: ignore[arg-type]
        finished_at=_time(stored.finished_ms),
    )
