"""The settings of the game service's own work: how long things are kept, the solver, games' retries and
settlement, erasures, secrets, daily challenges and webhooks."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import Field, ValidationError, field_validator, model_validator

from pyramide.engine.errors import InvalidRulesError
from pyramide.engine.rules import Rules
from pyramide.service.infra.cpus import cpu_budget, solver_workers
from pyramide.service.infra.settings.group import Group
from pyramide.service.infra.signing import parse_keys

DAY_S = 24 * 3600


def _cores_but_one() -> int:
    """One process's share of the CPU budget (:mod:`..cpus`) for its solver: the budget's cores but the one kept
    for players, at least one. `pyramide serve` with several HTTP workers gives each its share instead."""
    return solver_workers(cpu_budget().cpus, 1)


class Retention(Group):
    """How long what the service keeps lives."""

    unfinished_ttl_s: int = Field(30 * DAY_S, gt=0)
    """An unfinished game expires this long after its last change."""
    player_idle_ttl_s: int = Field(30 * DAY_S, gt=0)
    """A player that has never finished a game expires this long after its last request."""
    idempotency_ttl_s: int = Field(DAY_S, gt=0)
    """How long a response is kept for retries with the same Idempotency-Key."""
    analysis_ttl_s: int = Field(7 * DAY_S, gt=0)
    """How long a deal's analysis is kept for repeats (decided or out of time)."""
    session_ttl_s: int = Field(DAY_S, gt=0)
    """How long a session an app issues for one of its players (``POST /v1/apps/me/players/{id}/sessions``) works."""


class Play(Group):
    """How a move that lost a race is retried, and when a game's statistics are taken for stuck."""

    conflict_retries: int = Field(5, ge=0)
    """How often a move that lost a race (no If-Match) is tried again on the fresh state before 409."""
    settlement_grace_s: float = Field(30.0, ge=0)
    """A game whose statistics are still pending this long after its change was saved is taken for one whose
    request died, and settled when its player's statistics are read."""


class SolverSettings(Group):
    """The solver's processes and how long a search may take."""

    env_prefix = "PYRAMIDE_SOLVER_"
    time_limit_s: float = Field(5.0, gt=0)
    """How long a hint or a deal analysis may search."""
    workers: int = Field(default_factory=_cores_but_one, ge=1)
    """Solver worker processes for every search in each HTTP process (default: its share of the CPU budget's cores,
    one kept for players, at least 1); one more serves only players."""
    queue: int = Field(8, ge=0)
    """Solver requests that may wait for a worker; past that, 503 ``solver_busy``."""


class Erasure(Group):
    """What follows a player's erasure."""

    env_prefix = "PYRAMIDE_ERASURE_"
    guard_s: float = Field(120.0, gt=0)
    """How long an erased player's tombstone stops every write of its keys: longer than any request may be in flight
    (settlement included), so that none that raced the erasure brings a key back."""
    rewrite_s: float = Field(60.0, ge=0)
    """After erasures, Redis's append-only file is rewritten (their data off the disk) at most this often, once their
    tombstones are gone; ``0``: never asked for (an external Redis whose operator rewrites it)."""


class Secrets(Group):
    """The operator's secrets; none is ever shown (not in a repr, not in an error). Each may be given in its variable
    or in a file its ``*_FILE`` variable names (a Kubernetes Secret mounted as a file): the file's text, without the
    whitespace around it, is the value, checked as the variable's would be."""

    deal_secret: str | None = Field(None, min_length=16, repr=False)
    """The secret sealed deals (daily challenges) are dealt from; without it, one is generated once and kept in
    Redis."""
    deal_secret_file: Path | None = None
    """A file holding ``deal_secret``, instead of the variable."""
    operator_key: str | None = Field(None, min_length=32, max_length=512, pattern=r"^[\x21-\x7e]+$", repr=False)
    """The operator's key for ``/v1/admin`` (``Authorization: Bearer <key>``): at least 32 visible ASCII characters;
    unset, every admin route answers 404."""
    operator_key_file: Path | None = None
    """A file holding ``operator_key``, instead of the variable."""
    signing_keys: str | None = Field(None, repr=False)
    """The Ed25519 keys result certificates are signed with, the first signing and all published at
    ``/.well-known/jwks.json``: a JSON array of JWKs (or a JWK Set) or PEM blocks (``docs/certificates.md``); without
    it, one is generated once and kept in Redis."""
    signing_keys_file: Path | None = None
    """A file holding ``signing_keys``, instead of the variable."""

    @field_validator("signing_keys")
    @classmethod
    def _signing_keys(cls, value: str | None) -> str | None:
        """Keys that sign and verify (:func:`signing.parse_keys`): a key that is not Ed25519, a first key without
        its private half or two keys with one id would show only at the first certificate."""
        if value is not None:
            parse_keys(value)
        return value

    @model_validator(mode="before")
    @classmethod
    def _read_files(cls, data: Any) -> Any:
        """Each ``*_file`` read into its secret. An error names the ``*_FILE`` variable, never the text: a file
        that cannot be read, a text the variable would be refused with, or a variable set too (unless both say the
        same, as a copy of these settings does)."""
        if not isinstance(data, dict):
            return data
        values = dict(data)
        for name in ("deal_secret", "operator_key", "signing_keys"):
            path = values.get(f"{name}_file")
            if path is None:
                continue
            variable = cls.variable(f"{name}_file")
            text = _secret_text(Path(path), variable)
            if values.get(name) not in (None, text):
                raise ValueError(f"{variable}: set it or {cls.variable(name)}, not both")
            try:
                cls.model_validate({name: text})
            except ValidationError as error:
                reason = str(error.errors()[0]["msg"]).removeprefix("Value error, ")
                raise ValueError(f"{variable}: {reason} (in {path})") from None
            values[name] = text
        return values

    def kept_in_redis(self) -> list[str]:
        """What is generated and kept in Redis for want of its setting, a line each for the log at start: whoever
        reads Redis's files or a backup holds it."""
        kept = []
        if self.signing_keys is None:
            kept.append(
                "the certificate signing key is generated once and kept in Redis, as neither PYRAMIDE_SIGNING_KEYS"
                " nor PYRAMIDE_SIGNING_KEYS_FILE is set: whoever reads Redis's files or a backup can sign"
                " certificates in the service's name; give it as a secret (docs/security.md, Secrets at rest)"
            )
        if self.deal_secret is None:
            kept.append(
                "the deal secret is generated once and kept in Redis, as neither PYRAMIDE_DEAL_SECRET nor"
                " PYRAMIDE_DEAL_SECRET_FILE is set: whoever reads Redis's files or a backup can deal the daily"
                " challenges' sealed cards ahead; give it as a secret (docs/security.md, Secrets at rest)"
            )
        return kept


def _secret_text(path: Path, variable: str) -> str:
    """The text of the file ``path`` without the whitespace around it (a Secret's file may end with a newline)."""
    try:
        return path.read_text(encoding="utf-8").strip()
    except UnicodeDecodeError:
        raise ValueError(f"{variable}: {path} is not UTF-8 text") from None
    except OSError as error:
        raise ValueError(f"{variable}: cannot read {path} ({error.strerror or error})") from None


class Challenges(Group):
    """The daily challenges: their rule sets, how their deals are chosen and closed, whose wins rank."""

    env_prefix = "PYRAMIDE_CHALLENGE_"
    presets: tuple[str, ...] = ("N", "2S")
    """The rule sets with a daily challenge, by deal-code segment (``N,2S``); ``N`` always among them."""
    candidates: int = Field(64, ge=1)
    """Sealed candidates tried, in order, for a challenge's deal before giving up on the day (503)."""
    days_ahead: int = Field(7, ge=0, le=31)
    """Days after today whose challenges a background task keeps chosen, with their commitments published (at the
    solver's low priority). The promise to players is 7; 0 chooses each on its day's first request, with no
    commitment ahead of the day (for development and tests that do not look at commitments)."""
    close_check_s: float = Field(30.0, gt=0, le=3600)
    """How often each process looks for challenges that closed and emits their ``challenge.closed`` event (once per
    challenge, whichever process sees it first): the event's delay after midnight UTC is at most this."""
    players: Literal["any", "app"] = "any"
    """Who plays a daily challenge: ``any`` player, or only ``app`` players (those an app vouches for): then an
    anonymous player may neither start a challenge game nor see one's cards until its challenge closes (403
    ``app_player_required``), and no anonymous win enters the board."""
    min_move_ms: int = Field(150, ge=0, validation_alias="PYRAMIDE_MIN_MOVE_MS")
    """A challenge win faster than this per move (over the median interval between operations, or over the whole
    game's intervals) waits in the review list instead of entering the board; 0: no floor."""
    min_line_move_ms: int = Field(400, ge=0, validation_alias="PYRAMIDE_MIN_LINE_MOVE_MS")
    """The pace of a person who already knew the deal's shortest line: a challenge win in less time than the deal's
    par times this is held for review by the screening (``docs/fair-play.md``, Screening); 0: no such bound."""
    screen_worlds: int = Field(6, ge=0, validation_alias="PYRAMIDE_SCREEN_WORLDS")
    """Stock orders the player could not tell from the real one, against which the screening weighs a win's early
    choices (foresight); 0: no such comparison."""
    screen_time_limit_s: float = Field(30.0, gt=0, validation_alias="PYRAMIDE_SCREEN_TIME_LIMIT_S")
    """How long the solver may screen one win; a win not judged in time is held as ``not_decided``."""

    @property
    def screening(self) -> bool:
        """Whether challenge wins that pass the cheap rules are screened by the solver before they rank."""
        return self.min_line_move_ms > 0 or self.screen_worlds > 0

    @field_validator("presets", mode="before")
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


class Webhooks(Group):
    """Delivering events to apps' endpoints."""

    env_prefix = "PYRAMIDE_WEBHOOK_"
    allow_loopback: bool = False
    """Whether webhook endpoints may be ``http://`` and loopback addresses (names that resolve to them too): for
    tests only. Off, only ``https://`` URLs whose every address is public are registered and called."""
    retry_schedule_s: tuple[int, ...] = (0, 5, 300, 1800, 7200, 18000, 36000, 36000)
    """The waits (s) before each attempt at delivering an event to an endpoint, the first one's included (the
    Standard Webhooks schedule: over 24 hours); after the last attempt the delivery is ``failed``."""
    disable_after_s: float = Field(432_000, gt=0)
    """How long an endpoint may fail without a single success before it is disabled (5 days, as Svix: past the retry
    schedule's span, so one event's retries never disable it): no more attempts, its events are ``skipped`` (kept in
    its log for a redelivery by hand) so its outboxes drain, until the app enables it again."""
    timeout_s: float = Field(10, gt=0, le=60)
    """How long one delivery may take (connecting, sending and reading the answer's first 4 KiB)."""
    delivery: bool = True
    """Whether this process delivers webhooks. Off, it still records every event (in the script that saves its
    change) and another process delivers it: an operator may keep delivery off the processes that serve players."""

    @field_validator("retry_schedule_s", mode="before")
    @classmethod
    def _schedule(cls, value: object) -> object:
        """A comma-separated list of whole seconds (``0,5,300``), as an environment variable gives it, or a list."""
        if isinstance(value, str):
            return tuple(part.strip() for part in value.split(",") if part.strip())
        return value

    @field_validator("retry_schedule_s")
    @classmethod
    def _schedule_values(cls, value: tuple[int, ...]) -> tuple[int, ...]:
        """At least one attempt, no negative wait."""
        if not value or any(wait < 0 for wait in value):
            raise ValueError("at least one wait, none negative (0,5,300,…)")
        return value
