"""What the game routes are given by injection beyond the domain's services: one object for the routes that change a
game (see :class:`GameWrites`). Built by the wiring (``services``), which thereby imports no controller."""

from __future__ import annotations

from dataclasses import dataclass

from pyramide.service.games.play import GamePlay
from pyramide.service.http.limits import MoveAllowance


@dataclass(frozen=True, slots=True)
class GameWrites:
    """What the routes that change a game need, as one dependency: Litestar resolves two or more dependencies of a
    route in an anyio task group (a task each), a single one by awaiting its provider; the move route is the
    service's busiest."""

    play: GamePlay
    allowance: MoveAllowance
