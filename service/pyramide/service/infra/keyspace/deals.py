"""The keys of deals and what is played on them: a deal's leaderboards ``{d:<code>}``, a daily challenge's
``{c:<id>}``, the review queue ``{reviews}``, the solver's analyses and pars, and the secret deal codes are sealed
with."""

from __future__ import annotations

from typing import Final, NamedTuple


class Boards(NamedTuple):
    """The keys of one deal's leaderboards."""

    ranked: str
    """The ranking of every entry (a sorted set)."""
    best: str
    """Each player's best member (a hash)."""
    entries: str
    """The entries' details (a hash)."""
    apps: str
    """The entries of app players."""
    anonymous: str
    """The entries of anonymous players."""
    event_ids: str
    """A challenge board's app players: the ids their app's events name them by (a hash, JSON by player)."""
    outbox: str
    """A challenge board's outbox, in the board's slot: its ``challenge.entry`` events."""
    changes: str
    """The board's change counter (only grows): the id of its live stream's events, published on the channel named
    :attr:`ranked` by every script that changes the board."""


def boards_of_deal(code: str) -> Boards:
    tag = f"pyr:{{d:{code}}}:"
    return Boards(
        tag + "board",
        tag + "best",
        tag + "entries",
        tag + "board:app",
        tag + "board:anonymous",
        tag + "event-ids",
        tag + "outbox",
        tag + "changes",
    )


class BoardShown(NamedTuple):
    """The keys a board's bump takes (:mod:`stats.leaderboards`' ``touch``): its channel and change counter, and what
    its GET showed besides the entries when the counter last grew for it (its par, a challenge's close)."""

    ranked: str
    changes: str
    shown: str


def board_shown(code: str) -> BoardShown:
    boards = boards_of_deal(code)
    return BoardShown(boards.ranked, boards.changes, f"pyr:{{d:{code}}}:shown")


def challenge_deal(challenge: str) -> str:
    return f"pyr:{{c:{challenge}}}:deal"


def challenge_games(challenge: str) -> str:
    """The games played at a challenge."""
    return f"pyr:{{c:{challenge}}}:games"


class ReviewQueue(NamedTuple):
    """The review queue's keys."""

    queue: str
    items: str
    order: str


REVIEWS: Final = ReviewQueue("pyr:{reviews}:queue", "pyr:{reviews}:items", "pyr:{reviews}:order")


SCREENS: Final = "pyr:{screens}:due"
"""The challenge wins whose screening is under way or due again (``<player>:<game>`` by the ms it is due): a win
the solver could not take, or whose process died mid-screen, is screened again from here without a stats read."""


def challenge_reviews(challenge: str) -> str:
    """The reviews held for one challenge's results."""
    return "pyr:{reviews}:c:" + challenge


def analysis(code: str, budget: int, time_limit_ms: int, kind: str) -> str:
    """A deal's analysis by the solver, kept for its budget and time limit."""
    return f"pyr:{{analysis:{code}}}:{budget}:{time_limit_ms}{kind}"


def par(code: str) -> str:
    """A deal's par (its shortest winning line's length), or why there is none, per code (the code names the
    rules too)."""
    return f"pyr:{{analysis:{code}}}:par"


DEAL_SECRET: Final = "pyr:deal-secret"
