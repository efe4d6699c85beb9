"""Service settings: one validated object, read once from the environment (pydantic-settings). Every variable is in
the table of ``docs/operations.md``; a test holds the two to each other."""

from __future__ import annotations

import ipaddress
import os
import re
from collections.abc import Mapping
from functools import lru_cache
from pathlib import Path
from typing import Annotated, Any, Literal
from urllib.parse import urlsplit

from pydantic import AliasChoices, Field, ValidationError, field_validator, model_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

from pyramide.engine.errors import InvalidRulesError
from pyramide.engine.rules import Rules
from pyramide.service.infra.ratelimit import Limit, Quota
from pyramide.service.infra.signing import parse_keys

DAY_S = 24 * 3600
LIMIT_NAMES = (
    "players",
    "analyses",
    "games",
    "moves",
    "hints",
    "exports",
    "address_moves",
    "address_games",
    "address_keyed_moves",
)
QUOTA_NAMES = ("players", "games")
APP_LIMIT_NAMES = ("players", "address_games", "address_moves", "address_keyed_moves")
"""The per-address limits an app has its own of (``app_limit_*``), with its quotas ``app_quota_*``."""


class Limits:
    """Requests per minute: per client address for ``players`` (creating players) and ``analyses`` (the public
    solver route); per player for ``games`` (creating games), ``moves`` (moves, taps, abandons), ``hints`` and
    ``exports`` (data exports); per client address for ``address_moves`` (what counts against ``moves``, of every
    player of the address together), ``address_games`` (games created by every player of the address together) and
    ``address_keyed_moves`` (those of ``address_moves`` that carry an Idempotency-Key and keep one response more).
    Far above what a person playing reaches; far below what a script flooding the service sends. 0: no limit."""

    def __init__(self, *per_minute: int) -> None:
        self._limits = {name: Limit(name, count, 60) for name, count in zip(LIMIT_NAMES, per_minute, strict=True)}

    def limit(self, name: str) -> Limit:
        return self._limits[name]


@lru_cache(maxsize=64)
def _limits(*per_minute: int) -> Limits:
    return Limits(*per_minute)


@lru_cache(maxsize=256)
def _limit(name: str, per_minute: int) -> Limit:
    return Limit(name, per_minute, 60)


@lru_cache(maxsize=256)
def _quota(name: str, per_day: int) -> Quota:
    return Quota(name, per_day)


_MEMORY = re.compile(r"^[0-9]+(?:[kmg]b?)?$", re.IGNORECASE)
"""A size as Redis's ``maxmemory`` takes it: bytes, or a number with ``k``, ``kb``, ``m``, ``mb``, ``g``, ``gb``."""
_TOKEN = re.compile(r"^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$")
"""An HTTP field name (RFC 9110's ``token``)."""
REDIS_SCHEMES = ("redis", "rediss", "unix")
SECRET_FIELDS = frozenset({"deal_secret", "operator_key", "signing_keys", "redis_url", "REDIS_URL"})
"""Settings whose value never appears in an error (a Redis URL may carry a password)."""

QUOTA_PLAYERS = 300
QUOTA_GAMES = 300
MAX_UNFINISHED_GAMES = 50


def _cores_but_one() -> int:
    return max(1, (os.cpu_count() or 2) - 1)


class Settings(BaseSettings):
    """Everything the service reads from its environment, validated at start-up (a bad value stops it with the
    variable's name)."""

    model_config = SettingsConfigDict(env_prefix="PYRAMIDE_", frozen=True, populate_by_name=True, extra="ignore")

    redis_url: str | None = Field(None, validation_alias=AliasChoices("REDIS_URL", "redis_url"))
    """``REDIS_URL``; without it ``pyramide serve`` starts the embedded Redis."""
    redis_cluster: bool = Field(False, validation_alias=AliasChoices("REDIS_CLUSTER", "redis_cluster"))
    """``REDIS_CLUSTER=1``: talk to a Redis Cluster (keys already carry hash tags)."""
    redis_timeout_s: float = Field(2.0, gt=0)
    """How long a Redis command may take before the request answers 503."""
    data_dir: Path = Path("data")
    """Where the embedded Redis keeps its files."""
    redis_maxmemory: str = "1gb"
    """The embedded Redis's memory limit; a write past it is refused (507), never an eviction. ``0``: none."""
    redis_appendfsync: Literal["everysec", "always", "no"] = "everysec"
    """When the embedded Redis's append-only file reaches the disk (see ``docs/operations.md``)."""
    redis_max_restarts: int = Field(5, ge=1)
    """Tries in a row to bring a dead embedded Redis back before liveness turns 503 (the tries go on, and liveness is
    200 again once Redis is back)."""
    confirm_writes: Literal["auto", "always", "never"] = "auto"
    """Whether a write request's 2xx waits for Redis to confirm it can write its append-only file (one ``PING``):
    ``auto``, while the embedded Redis's disk has less than ``confirm_writes_reserve_mb`` free (beyond its
    append-only file's size), and never with ``REDIS_URL``; ``always``; ``never``."""
    confirm_writes_reserve_mb: int = Field(256, ge=0)
    """With ``confirm_writes=auto``: the free space below which writes are confirmed."""
    unfinished_ttl_s: int = Field(30 * DAY_S, gt=0)
    """An unfinished game expires this long after its last change."""
    player_idle_ttl_s: int = Field(30 * DAY_S, gt=0)
    """A player that has never finished a game expires this long after its last request."""
    idempotency_ttl_s: int = Field(DAY_S, gt=0)
    """How long a response is kept for retries with the same Idempotency-Key."""
    analysis_ttl_s: int = Field(7 * DAY_S, gt=0)
    """How long a deal's analysis is kept for repeats (decided or out of time)."""
    solver_time_limit_s: float = Field(5.0, gt=0)
    """How long a hint or a deal analysis may search."""
    solver_workers: int = Field(default_factory=_cores_but_one, ge=1)
    """Solver worker processes for every search (default: cores - 1, at least 1); one more serves only players."""
    solver_queue: int = Field(8, ge=0)
    """Solver requests that may wait for a worker; past that, 503 ``solver_busy``."""
    conflict_retries: int = Field(5, ge=0)
    """How often a move that lost a race (no If-Match) is tried again on the fresh state before 409."""
    settlement_grace_s: float = Field(30.0, ge=0)
    """A game whose statistics are still pending this long after its change was saved is taken for one whose
    request died, and settled when its player's statistics are read."""
    erasure_guard_s: float = Field(120.0, gt=0)
    """How long an erased player's tombstone stops every write of its keys: longer than any request may be in flight
    (settlement included), so that none that raced the erasure brings a key back."""
    erasure_rewrite_s: float = Field(60.0, ge=0)
    """After erasures, Redis's append-only file is rewritten (their data off the disk) at most this often, once their
    tombstones are gone; ``0``: never asked for (an external Redis whose operator rewrites it)."""
    header_timeout_s: float = Field(10.0, gt=0)
    """A connection whose request headers are not complete this long after they began is closed."""
    body_timeout_s: float = Field(30.0, gt=0)
    """A connection whose request body is not complete this long after its headers is closed (408)."""
    write_timeout_s: float = Field(30.0, gt=0)
    """A connection whose response writes have made no progress this long (its client reads nothing while the
    server has more than the socket's buffers to send) is closed: a live stream to a stalled reader ends, and its
    leases in the stream caps are given back."""
    max_header_bytes: int = Field(32 * 1024, ge=1024)
    """Request headers longer than this (request line included) are refused: 431, the connection closed."""
    max_connections: int = Field(4096, ge=16)
    """Open connections per HTTP process (fewer if its file limit is lower); past it, the slowest incomplete
    requests' connections are closed (503) so new clients are accepted at once."""
    shutdown_grace_s: float = Field(10.0, ge=0)
    """On SIGTERM or SIGINT, how long requests in flight may take to finish."""
    stream_heartbeat_s: float = Field(15.0, gt=0)
    """How often an open live stream (Server-Sent Events) sends a ``: ping`` comment and renews its lease in the
    stream caps, whether or not its writes progress (a killed process's streams stop counting after three missed
    beats)."""
    stream_notices_ping_s: float = Field(5.0, gt=0)
    """How often the process's pub/sub connection for the live streams' change notices is PINGed; one that has not
    answered within as long is taken for dead (a connection dropped silently on the way, which TCP notices only
    after minutes) and made afresh, and every stream's state read again."""
    stream_max_s: float = Field(3600.0, gt=0)
    """How long a live stream stays open before it ends (the client reconnects with ``Last-Event-ID``)."""
    streams_per_address: int = Field(20, ge=1)
    """Live streams open at once per client address, across every worker and replica (429 past it)."""
    streams_per_player: int = Field(5, ge=1)
    """Live game streams open at once per player, across every worker and replica (429 past it)."""
    trusted_proxy_header: str | None = None
    """E.g. ``X-Forwarded-For``: the header, in that header's format, in which the proxies named by
    ``trusted_proxies`` pass on the client's address. Read only from a peer in those networks."""
    trusted_proxies: Annotated[tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, ...], NoDecode] = ()
    """The proxies whose ``trusted_proxy_header`` is believed (``10.0.0.0/8,127.0.0.1``): the client is the
    rightmost address in it outside these networks. Both settings or neither."""
    workers: Annotated[int, Field(ge=1)] | Literal["auto"] = 1
    """HTTP worker processes of `pyramide serve`; ``auto``: one per core."""
    log_level: str = "INFO"
    """The level of the service's own log lines."""
    request_log_level: str = "INFO"
    """The level of the one line logged per request (``DEBUG`` hides them at the default ``log_level``)."""
    supervisor_state: Path | None = None
    """Set by `pyramide serve` for its workers: where the embedded Redis's supervisor publishes its state."""
    test_clock_file: Path | None = None
    """Test-only: the file a test's fake clock writes its time to (``infra/clock.py``); the service then reads its
    time from there instead of the system clock. Never set in production."""
    deal_secret: str | None = Field(None, min_length=16, repr=False)
    """The secret sealed deals (daily challenges) are dealt from; without it, one is generated once and kept in
    Redis. Never shown."""
    operator_key: str | None = Field(None, min_length=32, max_length=512, pattern=r"^[\x21-\x7e]+$", repr=False)
    """The operator's key for ``/v1/admin`` (``Authorization: Bearer <key>``): at least 32 visible ASCII characters;
    unset, every admin route answers 404. Never shown."""
    signing_keys: Annotated[str | None, NoDecode] = Field(None, repr=False)
    """The Ed25519 keys result certificates are signed with, the first signing and all published at
    ``/.well-known/jwks.json``: a JSON array of JWKs (or a JWK Set) or PEM blocks (``docs/certificates.md``); without
    it, one is generated once and kept in Redis. Never shown."""
    challenge_presets: Annotated[tuple[str, ...], NoDecode] = ("N", "2S")
    """The rule sets with a daily challenge, by deal-code segment (``N,2S``); ``N`` always among them."""
    challenge_candidates: int = Field(64, ge=1)
    """Sealed candidates tried, in order, for a challenge's deal before giving up on the day (503)."""
    challenge_days_ahead: int = Field(7, ge=0, le=31)
    """Days after today whose challenges a background task keeps chosen, with their commitments published (at the
    solver's low priority). The promise to players is 7; 0 chooses each on its day's first request, with no
    commitment ahead of the day (for development and tests that do not look at commitments)."""
    challenge_close_check_s: float = Field(30.0, gt=0, le=3600)
    """How often each process looks for challenges that closed and emits their ``challenge.closed`` event (once per
    challenge, whichever process sees it first): the event's delay after midnight UTC is at most this."""
    challenge_players: Literal["any", "app"] = "any"
    """Whose wins enter a daily challenge's board: ``any`` player's, or only ``app`` players' (those an app vouches
    for); anonymous players may still play."""
    min_move_ms: int = Field(150, ge=0)
    """A challenge win faster than this per move (over the median interval between moves, or over the whole game)
    waits in the review list instead of entering the board; 0: no floor."""
    cors_origins: Annotated[tuple[str, ...], NoDecode] = ()
    """Origins whose pages may call the API from a browser (``https://app.example,https://other.example``, or
    ``*`` for any); none by default."""
    limit_players: int = Field(120, ge=0)
    """Players created per minute per client address."""
    limit_analyses: int = Field(30, ge=0)
    """Deal analyses per minute per client address."""
    limit_games: int = Field(60, ge=0)
    """Games created per minute per player."""
    limit_moves: int = Field(600, ge=0)
    """Moves, taps and abandons per minute per player."""
    limit_hints: int = Field(30, ge=0)
    """Hints per minute per player."""
    limit_exports: int = Field(10, ge=0)
    """Data exports per minute per player."""
    limit_address_moves: int = Field(6000, ge=0)
    """Moves, taps and abandons per minute of all the players of one client address together: bounds how fast one
    address grows Redis with moves (``docs/security.md``, Bounded memory). Counted in each process and shared
    through Redis once a second, so an address may get up to a second of its traffic per process past it."""
    limit_address_games: int = Field(60, ge=0)
    """Games created per minute by all the players of one client address together (at most twice as many in any
    60 s: all at once, then one a second), checked with its daily quota ``quota_games`` in one step: bounds how
    fast one address grows Redis with games, a quota's reset included (``docs/security.md``, Bounded memory)."""
    limit_address_keyed_moves: int = Field(500, ge=0)
    """Moves, taps and abandons with an Idempotency-Key that keep one response more for their game (of about 425
    bytes: a game's first ``kept_responses_per_game``; one that replaces the oldest grows nothing and is not
    counted) per minute of all the players of one client address together: bounds how fast one address grows
    Redis with kept responses (``docs/security.md``, Bounded memory). Counted like ``limit_address_moves``; past
    it, every keyed move of the address is refused until the minute ends."""
    quota_players: int = Field(QUOTA_PLAYERS, ge=0)
    """Players created per client address per day (24 hours from the first): bounds the storage one address takes,
    where ``limit_players`` bounds only its speed (``docs/security.md``, Bounded memory)."""
    quota_games: int = Field(QUOTA_GAMES, ge=0)
    """Games created per client address per day (24 hours from the first), whichever of its players creates them."""
    session_ttl_s: int = Field(DAY_S, gt=0)
    """How long a session an app issues for one of its players (``POST /v1/apps/me/players/{id}/sessions``) works."""
    app_limit_players: int = Field(100 * 120, ge=0)
    """Per app, for its requests that name no ``Pyramide-Client-IP``: app players created per minute (in place of
    ``limit_players``, which one address gets)."""
    app_limit_address_games: int = Field(100 * 60, ge=0)
    """Per app, as ``app_limit_players``: games created per minute by all its players (for ``limit_address_games``)."""
    app_limit_address_moves: int = Field(100 * 6000, ge=0)
    """Per app, as ``app_limit_players``: moves, taps and abandons per minute (for ``limit_address_moves``)."""
    app_limit_address_keyed_moves: int = Field(100 * 500, ge=0)
    """Per app, as ``app_limit_players``: moves that keep one response more (for ``limit_address_keyed_moves``)."""
    app_quota_players: int = Field(100 * QUOTA_PLAYERS, ge=0)
    """Per app, as ``app_limit_players``: app players created per day (for ``quota_players``)."""
    app_quota_games: int = Field(100 * QUOTA_GAMES, ge=0)
    """Per app, as ``app_limit_players``: games created per day (for ``quota_games``)."""
    max_unfinished_games: int = Field(MAX_UNFINISHED_GAMES, ge=0)
    """Unfinished games a player may have at once; creating one more is 409 ``too_many_unfinished_games``."""
    max_game_operations: int = Field(10_000, ge=0)
    """Operations (moves, draws, undos, taps that change the game) one game records at most; past it 409
    ``game_too_long`` (abandoning is still allowed): one game's record, and so what it stores, is bounded."""
    kept_responses_per_game: int = Field(4, ge=1)
    """Responses kept for Idempotency-Key retries per game: the latest ones (a retry comes right after its lost
    answer); older ones go at once, not after ``idempotency_ttl_s``, so playing fast cannot fill Redis."""
    webhook_allow_loopback: bool = False
    """Whether webhook endpoints may be ``http://`` and loopback addresses (names that resolve to them too): for
    tests only. Off, only ``https://`` URLs whose every address is public are registered and called."""
    webhook_retry_schedule_s: Annotated[tuple[int, ...], NoDecode] = (0, 5, 300, 1800, 7200, 18000, 36000, 36000)
    """The waits (s) before each attempt at delivering an event to an endpoint, the first one's included (the
    Standard Webhooks schedule: over 24 hours); after the last attempt the delivery is ``failed``."""
    webhook_disable_after_s: float = Field(432_000, gt=0)
    """How long an endpoint may fail without a single success before it is disabled (5 days, as Svix: past the retry
    schedule's span, so one event's retries never disable it): no more attempts, its events are ``skipped`` (kept in
    its log for a redelivery by hand) so its outboxes drain, until the app enables it again."""
    webhook_timeout_s: float = Field(10, gt=0, le=60)
    """How long one delivery may take (connecting, sending and reading the answer's first 4 KiB)."""
    webhook_delivery: bool = True
    """Whether this process delivers webhooks. Off, it still records every event (in the script that saves its
    change) and another process delivers it: an operator may keep delivery off the processes that serve players."""

    @field_validator("redis_url")
    @classmethod
    def _redis_url(cls, value: str | None) -> str | None:
        """A URL redis-py connects with (``redis://``, ``rediss://`` with a host, ``unix://`` with a path): anything
        else would fail only at the first request, or start the embedded Redis's checks on a wrong premise."""
        if value is None:
            return None
        try:
            url = urlsplit(value)
            url.port  # noqa: B018 - parsing the port is the check
        except ValueError as error:
            raise ValueError(f"not a Redis URL ({error})") from None
        if url.scheme not in REDIS_SCHEMES:
            raise ValueError("not a Redis URL: redis://host[:port][/db], rediss://… or unix:///path")
        if url.scheme == "unix" and not url.path:
            raise ValueError("a unix:// Redis URL needs the socket's path (unix:///run/redis.sock)")
        if url.scheme != "unix" and not url.hostname:
            raise ValueError(f"a {url.scheme}:// Redis URL needs a host ({url.scheme}://redis:6379/0)")
        if url.scheme != "unix" and url.path.strip("/") and not url.path.strip("/").isdigit():
            raise ValueError("a Redis URL's path is its database number (redis://host:6379/0)")
        return value

    @field_validator("signing_keys")
    @classmethod
    def _signing_keys(cls, value: str | None) -> str | None:
        """Keys that sign and verify (:func:`signing.parse_keys`): a key that is not Ed25519, a first key without
        its private half or two keys with one id would show only at the first certificate."""
        if value is not None:
            parse_keys(value)
        return value

    @field_validator("redis_maxmemory")
    @classmethod
    def _memory(cls, value: str) -> str:
        """A size the embedded Redis accepts (``1gb``, ``512mb``, ``1073741824``, ``0``); else it would refuse to
        start with a traceback."""
        if not _MEMORY.match(value.strip()):
            raise ValueError("a size such as 1gb, 512mb, 100kb or a number of bytes (0: no limit)")
        return value.strip().lower()

    @field_validator("workers", mode="before")
    @classmethod
    def _workers(cls, value: object) -> object:
        """A whole number of at least 1, or ``auto`` (one error, not one per alternative of the type)."""
        if value == "auto" or isinstance(value, int):
            return value
        text = str(value).strip()
        if not text.isdigit() or int(text) < 1:
            raise ValueError("a whole number of at least 1, or auto")
        return int(text)

    @field_validator("webhook_retry_schedule_s", mode="before")
    @classmethod
    def _schedule(cls, value: object) -> object:
        """A comma-separated list of whole seconds (``0,5,300``), as an environment variable gives it, or a list."""
        if isinstance(value, str):
            return tuple(part.strip() for part in value.split(",") if part.strip())
        return value

    @field_validator("webhook_retry_schedule_s")
    @classmethod
    def _schedule_values(cls, value: tuple[int, ...]) -> tuple[int, ...]:
        """At least one attempt, no negative wait."""
        if not value or any(wait < 0 for wait in value):
            raise ValueError("at least one wait, none negative (0,5,300,…)")
        return value

    @field_validator("cors_origins", mode="before")
    @classmethod
    def _origins(cls, value: object) -> object:
        """A comma-separated list, as an environment variable gives it, or a list; each an origin as browsers send
        it (``https://host[:port]``), or ``*`` alone: anything else would never match a browser's ``Origin``."""
        items = [o.strip().rstrip("/") for o in value.split(",") if o.strip()] if isinstance(value, str) else value
        if not isinstance(items, list | tuple):
            return value
        origins = tuple(str(o).strip().rstrip("/") for o in items)
        if "*" in origins and len(origins) > 1:
            raise ValueError("* (any origin) stands alone")
        for origin in origins:
            if origin != "*":
                _check_origin(origin)
        return origins

    @field_validator("trusted_proxy_header")
    @classmethod
    def _proxy_header(cls, value: str | None) -> str | None:
        """An HTTP field name carrying addresses in ``X-Forwarded-For``'s format; ``Forwarded`` (RFC 7239,
        ``for=…``) is another format, whose entries would never be read as addresses."""
        if value is None:
            return None
        name = value.strip()
        if not _TOKEN.match(name):
            raise ValueError("not an HTTP header name (e.g. X-Forwarded-For)")
        if name.lower() == "forwarded":
            raise ValueError("Forwarded (RFC 7239) is not read; name a header in X-Forwarded-For's format")
        return name

    @field_validator("trusted_proxies", mode="before")
    @classmethod
    def _networks(cls, value: object) -> object:
        """A comma-separated list of networks or addresses; a host address with a prefix (``10.0.0.1/8``) is
        refused as a likely typo."""
        items = [n.strip() for n in value.split(",") if n.strip()] if isinstance(value, str) else value
        if not isinstance(items, list | tuple):
            return value
        networks = []
        for item in items:
            try:
                networks.append(ipaddress.ip_network(item))
            except ValueError as error:
                raise ValueError(f"not a network or address: {item!r} ({error})") from None
        return tuple(networks)

    @model_validator(mode="after")
    def _proxies_with_their_header(self) -> Settings:
        """A trusted header with no one to trust it from would never be read (and a list of proxies with no
        header would say nothing): either is a mistake, refused at start."""
        if (self.trusted_proxy_header is None) != (not self.trusted_proxies):
            raise ValueError("set PYRAMIDE_TRUSTED_PROXY_HEADER and PYRAMIDE_TRUSTED_PROXIES together, or neither")
        return self

    @field_validator("challenge_presets", mode="before")
    @classmethod
    def _presets(cls, value: object) -> object:
        """Comma-separated rule-set segments, each canonical (as a deal code writes it), ``N`` among them."""
        items = [p.strip() for p in value.split(",") if p.strip()] if isinstance(value, str) else value
        if not isinstance(items, list | tuple):
            return value
        presets = tuple(dict.fromkeys(str(p) for p in items))
        for preset in presets:
            try:
                canonical = Rules.from_segment(preset).segment
            except InvalidRulesError:
                canonical = None
            if canonical != preset:
                raise ValueError(f"not a rule-set segment as deal codes write it: {preset!r}")
        if "N" not in presets:
            raise ValueError("N (the app's rules) must be among them")
        return presets

    @field_validator("log_level", "request_log_level")
    @classmethod
    def _level(cls, value: str) -> str:
        level = value.upper()
        if level not in ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"):
            raise ValueError("one of DEBUG, INFO, WARNING, ERROR, CRITICAL")
        return level

    @property
    def limits(self) -> Limits:
        """The rate limits, built once per set of values (settings are frozen; a copy with other values gets its
        own)."""
        return _limits(
            self.limit_players,
            self.limit_analyses,
            self.limit_games,
            self.limit_moves,
            self.limit_hints,
            self.limit_exports,
            self.limit_address_moves,
            self.limit_address_games,
            self.limit_address_keyed_moves,
        )

    def quota(self, name: str) -> Quota:
        """The per-address daily quota ``name`` (``players`` or ``games``)."""
        return _quota(name, getattr(self, f"quota_{name}"))

    def app_limit(self, name: str, overrides: Mapping[str, int]) -> Limit:
        """An app's own rate limit ``name`` (one of :data:`APP_LIMIT_NAMES`): its value from ``createApp`` when it
        set one, else ``app_limit_<name>``."""
        return _limit(name, overrides.get(name, getattr(self, f"app_limit_{name}")))

    def app_quota(self, name: str, overrides: Mapping[str, int]) -> Quota:
        """An app's own daily quota ``name`` (``players`` or ``games``), as :meth:`app_limit`."""
        return _quota(name, overrides.get(f"quota_{name}", getattr(self, f"app_quota_{name}")))

    @property
    def worker_count(self) -> int:
        return (os.cpu_count() or 1) if self.workers == "auto" else self.workers

    @classmethod
    def from_env(cls) -> Settings:
        return cls()


def _check_origin(origin: str) -> None:
    """``origin`` is one as a browser sends it in ``Origin``: ``http`` or ``https``, a host, maybe a port, and
    nothing else."""
    try:
        url = urlsplit(origin)
        url.port  # noqa: B018 - parsing the port is the check
    except ValueError as error:
        raise ValueError(f"not an origin: {origin!r} ({error})") from None
    if url.scheme not in ("http", "https") or not url.hostname or url.path or url.query or url.fragment:
        raise ValueError(f"not an origin (https://host[:port]): {origin!r}")
    if url.username is not None or url.password is not None:
        raise ValueError(f"not an origin (https://host[:port]): {origin!r}")


def variable(field: str) -> str:
    """The environment variable of the setting ``field`` (``limit_moves`` -> ``PYRAMIDE_LIMIT_MOVES``; an error
    about a setting read through its alias names the alias, ``REDIS_URL``, already)."""
    info = Settings.model_fields.get(field)
    if info is None:
        return field
    choices = getattr(info.validation_alias, "choices", None)
    return str(choices[0]) if choices else f"PYRAMIDE_{field.upper()}"


def settings_errors(error: ValidationError) -> list[str]:
    """One line per bad setting, naming its variable (not the field) and, unless it is a secret, the value."""
    lines = []
    for entry in error.errors():
        message = str(entry["msg"]).removeprefix("Value error, ")
        if not entry["loc"]:
            lines.append(message)
            continue
        field = str(entry["loc"][0])
        value = str(entry["input"])
        shown = "" if field in SECRET_FIELDS or value in message else f" (got {value[:80]!r})"
        lines.append(f"{variable(field)}: {message}{shown}")
    return list(dict.fromkeys(lines))


def no_limits() -> dict[str, Any]:
    """Settings that switch every rate limit, quota and cap off."""
    return {
        **{f"limit_{name}": 0 for name in LIMIT_NAMES},
        **{f"quota_{name}": 0 for name in QUOTA_NAMES},
        "max_unfinished_games": 0,
        "max_game_operations": 0,
    }
