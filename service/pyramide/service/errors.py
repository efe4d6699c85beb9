"""The service's domain errors: what went wrong, as a stable code and the values its message names. HTTP-free: the
HTTP package alone decides each code's status and headers (:mod:`pyramide.service.http.problems`)."""

from __future__ import annotations

from enum import StrEnum

from pyramide.engine import IllegalMoveError


class ErrorCode(StrEnum):
    """Every code the domain refuses a request with. The engine's own are :class:`pyramide.engine.codes.Code`; the
    HTTP layer's own (a body too large, a malformed header, a dropped connection) are ``http.problems.HttpCode``."""

    UNAUTHORIZED = "unauthorized"
    FORBIDDEN = "forbidden"
    GAME_NOT_FOUND = "game_not_found"
    STEP_NOT_FOUND = "step_not_found"
    GAME_NOT_FINISHED = "game_not_finished"
    NOT_FOUND = "not_found"
    VALIDATION_FAILED = "validation_failed"
    PRECONDITION_FAILED = "precondition_failed"
    VERSION_CONFLICT = "version_conflict"
    IDEMPOTENCY_KEY_REUSED = "idempotency_key_reused"
    IDEMPOTENCY_KEY_IN_USE = "idempotency_key_in_use"
    IDEMPOTENCY_KEY_EXPIRED = "idempotency_key_expired"
    RATE_LIMITED = "rate_limited"
    QUOTA_EXCEEDED = "quota_exceeded"
    TOO_MANY_STREAMS = "too_many_streams"
    TOO_MANY_UNFINISHED_GAMES = "too_many_unfinished_games"
    GAME_TOO_LONG = "game_too_long"
    SOLVER_BUSY = "solver_busy"
    SOLVER_IN_PROGRESS = "solver_in_progress"
    WINNABLE_DEAL_NOT_FOUND = "winnable_deal_not_found"
    CHALLENGE_NOT_FOUND = "challenge_not_found"
    CHALLENGE_ALREADY_PLAYED = "challenge_already_played"
    CHALLENGE_CLOSED = "challenge_closed"
    CHALLENGE_NOT_READY = "challenge_not_ready"
    HINTS_NOT_ALLOWED = "hints_not_allowed"
    PLAYER_BANNED = "player_banned"
    INVALID_PLAYER_HEADER = "invalid_player_header"
    PLAYER_HEADER_REQUIRED = "player_header_required"
    PLAYER_HEADER_NOT_ALLOWED = "player_header_not_allowed"
    APP_PLAYER_REQUIRED = "app_player_required"
    OPERATOR_ONLY = "operator_only"
    REVIEW_NOT_FOUND = "review_not_found"
    REVIEW_ALREADY_DECIDED = "review_already_decided"
    GAME_NOT_WON = "game_not_won"
    CERTIFICATE_SEALED = "certificate_sealed"
    WEBHOOK_URL_REFUSED = "webhook_url_refused"
    TOO_MANY_WEBHOOKS = "too_many_webhooks"
    WEBHOOK_NOT_FOUND = "webhook_not_found"
    DELIVERY_NOT_FOUND = "delivery_not_found"


class DomainError(Exception):
    """A request the domain refuses: ``code`` says why, ``params`` fill its message, ``retry_after_s`` says when
    trying again may succeed (for capacity and rate limits)."""

    def __init__(self, code: ErrorCode, *, retry_after_s: int | None = None, **params: str) -> None:
        super().__init__(code.value)
        self.code = code
        self.params = params
        self.retry_after_s = retry_after_s


class MoveRefusedError(Exception):
    """The engine refused a move: ``refusal`` says why; ``explained`` whether the player is told why (the game's
    error explanations are on, or the rules document shows that message always)."""

    def __init__(self, refusal: IllegalMoveError, explained: bool) -> None:
        super().__init__(refusal.code)
        self.refusal = refusal
        self.explained = explained
