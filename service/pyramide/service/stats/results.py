"""A finished game's result as the statistics count it: what the games domain writes beside the game when it ends,
in the same atomic write as its final state, and applies from there to the player's statistics and the deal's
leaderboard."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from typing import Any
from uuid import UUID


@dataclass(frozen=True, slots=True)
class GameResult:
    player: UUID
    game: UUID
    code: str | None
    """The deal code; ``None`` for a daily challenge's game, whose challenge names it once it has closed."""
    won: bool
    elapsed_ms: int
    """Server time from the first move to the win (for a loss: to the end)."""
    moves: int
    undos: int
    score: int
    finished_ms: int
    name: str | None = None
    """The player's name when the game ended, for the leaderboard."""
    challenge: str | None = None
    """The daily challenge the game was an attempt at."""
    board: str | None = None
    """The leaderboard a win is entered on: the code's, the challenge's (see :func:`boards.challenge_board`), or none (a
    challenge game finished after its challenge closed)."""
    app_id: str | None = None
    """The app whose player won (its id); ``None`` for an anonymous player."""
    app_name: str | None = None
    """That app's name when the game ended, for the leaderboard."""
    external_id: str | None = None
    """The app's own id of its player (for the app's events only: never on a board)."""
    times: list[int] | None = None
    """A challenge game's operation times (ms after the first move), for its cadence; ``None`` for other games."""
    deal: str | None = None
    """The deal code, a challenge's too (never shown with the result: it is what a win's par is looked up by);
    ``None`` in results written before par existed."""
    sealed_until_ms: int = 0
    """For a challenge's game, its close: the win's par counts in the statistics from then on only."""

    def to_bytes(self) -> bytes:
        return json.dumps({**asdict(self), "player": str(self.player), "game": str(self.game)}).encode()

    @classmethod
    def from_bytes(cls, data: bytes) -> GameResult:
        fields = json.loads(data)
        fields.setdefault("board", fields["code"])  # results written before challenges: the code's board
        return cls(**{**fields, "player": UUID(fields["player"]), "game": UUID(fields["game"])})

    @property
    def identity(self) -> str:
        """Who won, as the boards tell players apart: ``app`` or ``anonymous``."""
        return "anonymous" if self.app_id is None else "app"

    def clean(self, hints: int) -> bool:
        """Won without an undo and without a hint: the boards' first tier."""
        return self.undos == 0 and hints == 0

    def entry(self, hints: int) -> dict[str, Any]:
        """What a ranked list shows of this win."""
        return {
            "game_id": str(self.game),
            "player": str(self.player),
            "code": self.code,
            "challenge": self.challenge,
            "elapsed_ms": self.elapsed_ms,
            "moves": self.moves,
            "undos": self.undos,
            "hints": hints,
            "score": self.score,
            "finished_at": datetime.fromtimestamp(self.finished_ms / 1000, UTC).isoformat().replace("+00:00", "Z"),
            "name": self.name,
        }
