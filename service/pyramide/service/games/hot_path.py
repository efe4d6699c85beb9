"""The move route's one departure from dependency injection.

Litestar's dependency injection, resolved on every request, cost 13,270 instructions of a move request (1.0 %:
1,301,291 with ``Injected[GameService]``, 1,288,021 without; ``benchmarks/service_instructions.py``, on the tree of
commit ecc93dd plus this issue's changes). The three routes that change a game (moves, taps, abandon) therefore
take the game service, and the per-address allowance of moves (``http/limits.MoveAllowance``), from the
controller class each app builds for itself (:func:`bind_games`); every other handler receives its services by
injection.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from pyramide.service.games.play import GamePlay

C = TypeVar("C", bound=type)


def bind_games(controller: C, games: Callable[[], GamePlay], allowance: Callable[[], object]) -> C:
    """A subclass of ``controller`` whose ``games()`` is the running app's game service and ``allowance()`` its
    per-address allowance of moves (typed by the controller: this module speaks no HTTP)."""
    methods = {"games": staticmethod(games), "allowance": staticmethod(allowance)}
    bound: C = type(controller.__name__, (controller,), methods)  # type: ignore[assignment]
    return bound
