"""Snapshots: what a client sees of a stored game, in one pydantic model for every game response.

A snapshot is built as plain data from a stored game the engine keeps consistent, and written by msgspec. The service
does not validate it against :class:`Snapshot` on every move (pydantic's ``validate_python`` was 5 % of a move's time,
issue 58): the test suite does, for every snapshot any test builds (:func:`check_every_snapshot`, turned on by
``tests/conftest.py``), and ``tests/unit/service/test_snapshots.py`` holds the writer to the model over random games
of every rule set."""

from __future__ import annotations

from datetime import UTC, datetime
from functools import cache, lru_cache
from typing import Annotated, Any, NamedTuple

import msgspec
from pydantic import Field, TypeAdapter

from pyramide.engine import Feedback as EngineFeedback
from pyramide.engine import card_code
from pyramide.engine.cards import Card
from pyramide.engine.messages import Locale
from pyramide.engine.pyramid import POSITIONS, free_slots
from pyramide.engine.rules import Rules
from pyramide.service.deals import Par
from pyramide.service.deals.schemas import RuleSet
from pyramide.service.games.schemas import Slot, Snapshot
from pyramide.service.games.stored_game import StoredGame
from pyramide.service.status import GameStatus


class _SnapshotWithCheckedSlots(Snapshot):
    """:class:`Snapshot` for a pyramid and rules already validated piece by piece (:func:`_slots`, :func:`_rules`)."""

    pyramid: Annotated[list[Any], Field(min_length=28, max_length=28)]
    rules: Any


_SNAPSHOT = TypeAdapter(_SnapshotWithCheckedSlots)
_SLOT = TypeAdapter(Slot)
_RULES = TypeAdapter(RuleSet)
_JSON = msgspec.json.Encoder()
_CHECKING = [False]
"""Whether every snapshot built is validated against the model (the tests' mode: :func:`check_every_snapshot`)."""


def check_every_snapshot(on: bool = True) -> None:
    """From now on, validate every snapshot built against :class:`Snapshot` (a :class:`pydantic.ValidationError`
    for one that breaks it): what the test suite runs with, so that a snapshot no test validates by hand is still
    held to the documented model. Off in the service, where the hot path builds them from consistent games."""
    _CHECKING[0] = on


@cache
def _rules(rules: Rules) -> dict[str, Any]:
    """A rule set as validated data: one of at most 32, each validated once and shared (they are only read)."""
    data = rules.to_json()
    _RULES.validate_python(data)
    return data


@lru_cache(maxsize=4096)
def moment(ms: int) -> datetime:
    """A moment in milliseconds since the epoch, in UTC."""
    return datetime.fromtimestamp(ms / 1000, UTC)


def _time(ms: int | None) -> datetime | None:
    return None if ms is None else moment(ms)


def _code(card: int | None) -> str | None:
    return None if card is None else card_code(card)  # type: ignore[arg-type]


def shown_code(stored: StoredGame, now: int) -> str | None:
    """The game's deal code as clients see it: none for a challenge game while its challenge is open, since the code
    deals the face-down cards too."""
    return None if stored.sealed(now) else str(stored.game.code)


_RUNNING: dict[str, Any] = {"par": None, "par_status": None, "over_par": None}
_SEALED: dict[str, Any] = {"par": None, "par_status": "sealed", "over_par": None}


def par_fields(stored: StoredGame, par: Par | None, now: int) -> dict[str, Any]:
    """``par``, ``par_status`` and ``over_par`` as a game shows them: nothing while it runs; for a daily
    challenge's game, ``sealed`` until the close (its par would tell the deal's depth); else the deal's ``par`` as
    looked up (``None``: not looked up, shown as ``pending``) and, for a win at a known par, its moves minus it."""
    if not stored.status.decided:
        return _RUNNING
    if stored.sealed(now):
        return _SEALED
    if par is None:
        return {"par": None, "par_status": "pending", "over_par": None}
    won = stored.status is GameStatus.WON and par.moves is not None
    over = stored.game.moves - par.moves if won and par.moves is not None else None
    return {"par": par.moves, "par_status": str(par.status), "over_par": over}


def elapsed_ms(stored: StoredGame, now: int) -> int | None:
    """Server time from the first move to the win (or the end, or now)."""
    if stored.first_move_ms is None:
        return None
    return max(0, (stored.finished_ms or now) - stored.first_move_ms)


def same_every_time(stored: StoredGame) -> bool:
    """Whether every snapshot of this version of the game is the same body, whenever it was read: no clock is
    running (not started yet, or finished) and the deal code shows in every copy (no challenge game, or one that
    was finished once its challenge had closed). Only then may a GET answer 304 to the version's ETag: a running
    game's ``elapsed_ms`` grows, and a challenge game's ``code`` appears at the close without a new version."""
    if stored.first_move_ms is not None and stored.finished_ms is None:
        return False
    return stored.challenge is None or (stored.finished_ms or 0) >= stored.sealed_until_ms


@cache
def _slot(slot: int, card: Card | None, free: bool) -> Slot:
    """One slot as validated data. There are at most 28 x 53 x 2 of them, each validated once and then shared by
    every snapshot that shows it (they are only ever read)."""
    row, col = POSITIONS[slot]
    return _SLOT.validate_python({"row": row + 1, "col": col + 1, "card": _code(card), "free": free})


class _Pyramid(NamedTuple):
    slots: list[Slot]
    written: msgspec.Raw
    """The same slots as JSON: they were most of the bytes a snapshot writes, and most moves leave them as they
    were."""


@lru_cache(maxsize=4096)
def _pyramid(pyramid: tuple[Card, ...], present: int) -> _Pyramid:
    """The 28 slots, from validated pieces (validating all 28 again on every move that removes a card cost more
    than the rest of the snapshot together), kept with their JSON for the moves that leave the pyramid as it is."""
    free = set(free_slots(present))
    slots = [_slot(s, card if present >> s & 1 else None, s in free) for s, card in enumerate(pyramid)]
    return _Pyramid(slots, msgspec.Raw(_JSON.encode(slots)))


def snapshot_data(
    stored: StoredGame, locale: Locale, feedback: EngineFeedback | None = None, *, now: int
) -> dict[str, Any]:
    """The snapshot as plain data at ``now`` (ms), in the shape of :class:`Snapshot` (validated by pydantic while
    :func:`check_every_snapshot` is on). Plain data costs far less than building the nested models one by one,
    which matters on every move."""
    pyramid = _pyramid(stored.game.layout.pyramid, stored.game.present)
    return _validated(stored, locale, feedback, pyramid.slots, now, par=None)


def _validated(
    stored: StoredGame, locale: Locale, feedback: EngineFeedback | None, slots: list[Slot], now: int, *, par: Par | None
) -> dict[str, Any]:
    game = stored.game
    status = stored.status
    top = game.waste_top
    waste = game.waste
    data = {
        "id": stored.id,
        "code": shown_code(stored, now),
        "challenge": stored.challenge,
        "rules": _rules(game.rules),
        "version": stored.version,
        "status": status,
        "score": game.score,
        "moves": game.moves,
        "elapsed_ms": elapsed_ms(stored, now),
        "pyramid": slots,
        "waste": {"count": len(waste), "top": _code(top), "cards": [card_code(c) for c in waste]},
        "stock": {"count": game.stock_count},
        "selected": _code(game.selection),
        "undo_available": 0 if stored.abandoned else game.undo_available,
        "recycles": {"used": game.recycles_used, "left": game.recycles_left},
        "legal_moves": [] if status.final else game.legal_notations(),
        "explain_errors": game.explain_errors,
        "feedback": None
        if feedback is None
        else {"code": feedback.code, "message": feedback.message(locale, game.explain_errors)},
        "created_at": _time(stored.created_ms),
        "finished_at": _time(stored.finished_ms),
        **par_fields(stored, par, now),
    }
    if _CHECKING[0]:
        _SNAPSHOT.validate_python(data)
    return data


def snapshot_json(
    stored: StoredGame,
    locale: Locale,
    feedback: EngineFeedback | None = None,
    *,
    now: int,
    par: Par | None = None,
) -> bytes:
    """The snapshot as sent: :func:`snapshot_data` with the pyramid's kept JSON. It holds only JSON types, UUIDs
    and UTC datetimes, which msgspec writes exactly as pydantic would (a test holds it to that), in a fraction of
    the time. ``now`` (ms, from the service's clock) is the moment its running time is measured at: a retried request
    rebuilds the very same snapshot from the moment the first was answered. ``par``: the deal's par as looked up
    for a finished game's read (:func:`par_fields`)."""
    pyramid = _pyramid(stored.game.layout.pyramid, stored.game.present)
    data = _validated(stored, locale, feedback, pyramid.slots, now, par=par)
    data["pyramid"] = pyramid.written
    return _JSON.encode(data)
