"""Lines of play from the search's parent links."""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from typing import TypeVar

from pyramide.engine.moves import Move

K = TypeVar("K", bound=Hashable)


def path_to(parents: Mapping[K, tuple[K, Move] | None], end: K) -> list[Move]:
    """The moves from the search's start to ``end``, following each position's parent."""
    path: list[Move] = []
    step = parents[end]
    while step is not None:
        previous, move = step
        path.append(move)
        step = parents[previous]
    path.reverse()
    return path
