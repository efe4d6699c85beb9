"""Every Redis key the service uses, named here and only here.

Keys start with ``pyr:``. A key in braces is a Redis Cluster hash tag: every key of one player carries
``{p:<player id>}`` (its games, statistics, rate limits, token hash, ...) so that one Lua script can check and write
them together in one slot; an app's keys carry ``{app:<id>}``, a client address's ``{rl:<bucket>}``, a deal's
leaderboards ``{d:<code>}``, a daily challenge's ``{c:<id>}``, the review queue ``{reviews}``. A key that groups
several keys of one owner is a named tuple (its fields say what each is), never a list read by position.
"""

from __future__ import annotations

import hashlib
import ipaddress
from functools import lru_cache
from typing import Final, NamedTuple
from uuid import UUID

RECENT: Final = 4096
"""Key names kept for the players and games in play: every request names them several times, and ``str(UUID)`` is
not cheap."""


# -- a player's keys ------------------------------------------------------------------------------------------------


@lru_cache(maxsize=RECENT)
def player_tag(player: UUID | str) -> str:
    """The prefix of every key of one player (its id, or the id as a token spells it): the hash tag puts them all
    in the player's cluster slot."""
    return f"pyr:{{p:{player}}}:"


def player_pattern(player: UUID) -> str:
    """A ``SCAN`` pattern matching every key of the player (what an erasure deletes)."""
    return player_tag(player) + "*"


TOMBSTONE_PATTERN: Final = "pyr:{p:*}:erased"
"""A ``SCAN`` pattern matching every player's :func:`tombstone`."""


def player(player: UUID) -> str:
    """The player's settings and token hash (see ``players``)."""
    return player_tag(player) + "player"


@lru_cache(maxsize=RECENT)
def auth(player: UUID) -> str:
    """The hash of the player's current token (or the ban mark), compared by every script that changes a game."""
    return player_tag(player) + "auth"


def audit(player: UUID) -> str:
    """What was done to the player by operators and apps, for the player's export."""
    return player_tag(player) + "audit"


def tombstone(player: UUID) -> str:
    """Set by an erasure before anything of the player is deleted: every script that writes a key of the player
    checks it first and writes nothing once it is there."""
    return player_tag(player) + "erased"


def sessions(player: UUID) -> str:
    """The player's app sessions (hash of each session's secret: its app and expiry)."""
    return player_tag(player) + "sessions"


def boards(player: UUID) -> str:
    """The leaderboards the player is on."""
    return player_tag(player) + "boards"


def ban_kept(player: UUID) -> str:
    """The player's leaderboard entries taken off while the player is banned, to put back on an unban."""
    return player_tag(player) + "ban:kept"


def player_reviews(player: UUID) -> str:
    """The reviews held for the player's results."""
    return player_tag(player) + "reviews"


def solving(player: UUID) -> str:
    """Marks a solver run the player started, so one player runs one at a time."""
    return player_tag(player) + "solving"


def player_sealed(player: UUID | str, lookup: str) -> str:
    """A sealed response of one of the player's requests (a token rotation), in the player's slot."""
    return player_tag(player) + "sealed:" + lookup


@lru_cache(maxsize=RECENT)
def player_limit(player: UUID, limit: str) -> str:
    """The player's cell of the rate limit ``limit``, in the player's slot so scripts on its games check it."""
    return player_tag(player) + "rl:" + limit


class Statistics(NamedTuple):
    """The keys of one player's statistics."""

    counters: str
    """Games won and lost, streaks, best time and fewest moves, hints (a hash)."""
    games: str
    """The state of each game that counts (a hash: game id to ``playing``, ``won``, ``lost``)."""
    wins: str
    """The player's ranked wins (a sorted set)."""
    win: str
    """Each ranked win's details (a hash)."""
    pending: str
    """The games awaiting settlement (a sorted set by when they started to count)."""


def statistics(player: UUID) -> Statistics:
    tag = player_tag(player)
    return Statistics(tag + "stats", tag + "games", tag + "wins", tag + "win", pending(player))


@lru_cache(maxsize=RECENT)
def pending(player: UUID) -> str:
    """The player's games awaiting settlement; the move route names it on every save."""
    return player_tag(player) + "pending"


# -- a game's keys --------------------------------------------------------------------------------------------------


def game_tag_text(player: UUID, game: str) -> str:
    """The prefix of every key of one game, for a game id as text (as the player's lists hold it)."""
    return f"{player_tag(player)}g:{game}:"


@lru_cache(maxsize=RECENT)
def game_tag(player: UUID, game: UUID) -> str:
    """The prefix of every key of one game, under its owner's tag: another player's request finds nothing."""
    return game_tag_text(player, str(game))


def game_state(player: UUID, game: UUID) -> str:
    return game_tag(player, game) + "state"


def game_state_text(player: UUID, game: str) -> str:
    """:func:`game_state` for a game id as text (as the player's lists hold it)."""
    return game_tag_text(player, game) + "state"


def game_record(player: UUID, game: UUID) -> str:
    return game_tag(player, game) + "record"


def game_result(player: UUID, game: UUID) -> str:
    """The game's result for the statistics, written with the state that ends it."""
    return game_tag(player, game) + "result"


def game_review(player: UUID, game: UUID, version: int, budget: int, time_limit_ms: int) -> str:
    """The review by the solver (``pyramide.solver.review``) of one version of the game (a stuck game may still be
    undone and played on), kept for its budget and time limit."""
    return game_tag(player, game) + f"review:{version}:{budget}:{time_limit_ms}"


def game_hints(player: UUID, game: UUID) -> str:
    return game_tag(player, game) + "hints"


def game_hinted(player: UUID, game: UUID) -> str:
    """The game's version its last counted hint was given at: a hint asked again there is not counted again."""
    return game_tag(player, game) + "hinted"


def game_kept(player: UUID, game: UUID) -> str:
    """The digests of the game's kept responses, newest first."""
    return game_tag(player, game) + "kept"


def game_idempotency(player: UUID, game: UUID, digest: str) -> str:
    """The response kept for one Idempotency-Key (its digest) of a request on the game."""
    return game_tag(player, game) + "idem:" + digest


class GameLists(NamedTuple):
    """A player's lists of games, each a sorted set of game ids by the moment of their last change."""

    all: str
    open: str
    """In progress, or stuck."""
    won: str
    abandoned: str


@lru_cache(maxsize=RECENT)
def game_lists(player: UUID) -> GameLists:
    tag = player_tag(player) + "list:"
    return GameLists(f"{tag}all", f"{tag}open", f"{tag}won", f"{tag}abandoned")  # key names, not statuses


def attempt(player: UUID, challenge: str) -> str:
    """The player's one game at a daily challenge (its id)."""
    return player_tag(player) + "challenge:" + challenge


# -- apps -----------------------------------------------------------------------------------------------------------

APPS: Final = "pyr:apps"
"""The apps, ordered by creation."""


def app(app_id: UUID) -> str:
    """The app's hash: its name, key hash and allowances."""
    return f"pyr:{{app:{app_id}}}:app"


def app_audit(app_id: UUID) -> str:
    """The app's own stream of its actions."""
    return f"pyr:{{app:{app_id}}}:audit"


def app_binding(app_id: UUID, digest: str) -> str:
    """The player an app's external id (its SHA-256 digest) is bound to."""
    return f"pyr:{{app:{app_id}}}:player:{digest}"


def app_erased_ban(app_id: UUID, digest: str) -> str:
    """A ban kept past the erasure of the banned player (the digest of its id)."""
    return f"pyr:{{app:{app_id}}}:erased-ban:{digest}"


# -- client addresses -----------------------------------------------------------------------------------------------


@lru_cache(maxsize=RECENT)
def client_bucket(address: str) -> str:
    """The bucket a client address counts in: the address itself for IPv4, its /64 network for IPv6 (one host
    commonly holds a whole /64)."""
    try:
        parsed = ipaddress.ip_address(address.strip())
    except ValueError:
        return address.strip()[:64] or "unknown"
    if isinstance(parsed, ipaddress.IPv6Address):
        if parsed.ipv4_mapped is not None:
            return str(parsed.ipv4_mapped)
        return str(ipaddress.IPv6Network((parsed, 64), strict=False).network_address) + "/64"
    return str(parsed)


def address_limit(address: str, limit: str) -> str:
    """The client address's cell of the rate limit ``limit``."""
    return f"pyr:{{rl:{client_bucket(address)}}}:{limit}"


def address_quota(address: str, quota: str) -> str:
    """In the client's slot, beside its rate-limit cells, so that one script checks both."""
    return f"pyr:{{rl:{client_bucket(address)}}}:quota:{quota}"


def address_window(bucket: str, allowance: str, window: int) -> str:
    """An address bucket's counter of the allowance ``allowance`` for one minute window."""
    return f"pyr:{{rl:{bucket}}}:{allowance}:{window}"


def address_streams(address: str) -> str:
    """The live streams open from a client address: a sorted set of stream ids by the ms their lease ends."""
    return f"pyr:{{rl:{client_bucket(address)}}}:streams"


def player_streams(player: UUID) -> str:
    """The live streams open on a player's games: a sorted set of stream ids by the ms their lease ends."""
    return player_tag(player) + "streams"


def sealed_create(lookup: str) -> str:
    """A sealed player creation, under the hash of its Idempotency-Key."""
    return f"pyr:{{ip:{lookup}}}"


# -- deals, challenges, reviews and the rest -------------------------------------------------------------------------


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


# -- events ---------------------------------------------------------------------------------------------------------


def player_outbox(player: UUID) -> str:
    """The events of one player's changes (a game won, lost or abandoned; erased; banned), in its slot, in the order
    they were made: written by the script that makes the change (``lua/emit_event.lua``)."""
    return player_tag(player) + "outbox"


def challenge_outbox(challenge: str) -> str:
    """The events of one daily challenge (closed; an app player entered or left its board), in its slot."""
    return f"pyr:{{c:{challenge}}}:outbox"


def challenge_closed_event(challenge: str) -> str:
    """Set once the challenge's ``challenge.closed`` event was emitted (with it, in its slot): never emitted twice."""
    return f"pyr:{{c:{challenge}}}:closed-event"


def app_outbox(app_id: UUID | str) -> str:
    """The app's own outbox, in the app's slot: events that must outlive the player they concern (player.erased)."""
    return f"pyr:{{app:{app_id}}}:outbox"


def outbox_of_one_app(outbox: str) -> bool:
    """Whether every event of ``outbox`` goes to one app's endpoints: a player's or an app's, not a challenge's or
    a board's (whose events go to several apps, or to every app)."""
    return outbox.startswith(("pyr:{p:", "pyr:{app:"))


OUTBOX_PATTERN: Final = "pyr:*:outbox"
"""What the outbox sweep scans for: every outbox, whatever its slot."""

EVENTS_DUE: Final = "pyr:{events}:due"
"""The outboxes with events to deliver (members: outbox key names), under the ms from which they are due."""
EVENTS_CLAIMS: Final = "pyr:{events}:claims"
"""The outboxes a process works on (fields: outbox key names), each with its claim's lease (the ms it runs out at):
a new event marks a claimed outbox due, and no other claim may take it before the holder lets it go."""


AUDIT: Final = "pyr:audit"
"""Every operator and app action, newest last."""

DEAL_SECRET: Final = "pyr:deal-secret"
SIGNING_KEY: Final = "pyr:signing-key"
"""The Ed25519 key (PEM) certificates are signed with when ``PYRAMIDE_SIGNING_KEYS`` is unset: generated by the
first process, kept so that a restart keeps certificates verifiable."""

ERASURE_REWRITTEN: Final = "pyr:erasure:rewritten"
"""Until when the append-only file was rewritten after an erasure."""


def erased_token(token: str) -> str:
    """Marks a token whose player was erased, for a retried erasure: named by the token's SHA-256, never by the
    player."""
    return "pyr:erased:" + hashlib.sha256(token.encode()).hexdigest()


def webhooks(app_id: UUID) -> str:
    """An app's webhook endpoints (a hash: endpoint id → its JSON), in the app's slot."""
    return f"pyr:{{app:{app_id}}}:webhooks"


def webhook_log(app_id: UUID, webhook_id: str) -> str:
    """An endpoint's deliveries, newest last (a ZSET of event ids by the ms they were first tried)."""
    return f"pyr:{{app:{app_id}}}:webhook:{webhook_id}:log"


def webhook_deliveries(app_id: UUID, webhook_id: str) -> str:
    """An endpoint's deliveries by event id (a hash: event id → the delivery's JSON, its body included)."""
    return f"pyr:{{app:{app_id}}}:webhook:{webhook_id}:deliveries"


def webhook_health(app_id: UUID, webhook_id: str) -> str:
    """An endpoint's health (a hash of ms: ``failing_since``, ``failures`` in a row, ``next_probe``, ``last_success``,
    ``disabled_at``, and ``disabled_reason``): whether deliveries try it (``events/store.py``)."""
    return f"pyr:{{app:{app_id}}}:webhook:{webhook_id}:health"


def webhook_keys(app_id: UUID, webhook_id: str) -> tuple[str, str, str]:
    """Every key of one endpoint beside its field in ``webhooks``: its log, its deliveries and its health (all in the
    app's slot), which go when it does."""
    return (
        webhook_log(app_id, webhook_id),
        webhook_deliveries(app_id, webhook_id),
        webhook_health(app_id, webhook_id),
    )


WEBHOOK_APPS: Final = "pyr:{events}:apps"
"""The apps with at least one webhook endpoint (a set of app ids): whom an event for every app (``*``) goes to."""

REDELIVERIES: Final = "pyr:{events}:redeliver"
"""Redeliveries asked for and not yet sent (a list of ``<app id> <endpoint id> <event id>``)."""


def delivery_cursors(outbox: str) -> str:
    """Where each endpoint stands in one outbox (a hash: endpoint id → JSON of its last entry done, its attempts at
    the next one and when it is tried again), in the outbox's slot: one script writes them only while the outbox
    exists and deletes them with it (``lua/outbox_settle.lua``), and an erased player's go with its keys."""
    return f"{outbox}:cursors"
