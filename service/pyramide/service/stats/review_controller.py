"""The review list of held challenge wins (``stats.reviews``): read it, accept a win (the operator only: an app
whose own player won would be approving its own bot) or reject one (the operator, or an app with the ``moderation``
scope for its own players); every decision goes into the audit log, a refusal writes nothing."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any
from uuid import UUID

from litestar import Controller, Request, get, post
from litestar.datastructures import State
from pydantic import TypeAdapter

from pyramide.service.accounts import AuditLog, Principal
from pyramide.service.errors import DomainError, ErrorCode
from pyramide.service.http.body import parse_body
from pyramide.service.http.full import OPERATOR, WHILE_FULL
from pyramide.service.http.injection import Injected
from pyramide.service.http.paging import DEFAULT_LIMIT, Limit, ReviewsCursor, check_paging_query
from pyramide.service.http.params import IdText, id_of
from pyramide.service.http.responses import problems
from pyramide.service.infra.clock import now_ms
from pyramide.service.stats.fairness import HoldReason
from pyramide.service.stats.leaderboards import Leaderboards
from pyramide.service.stats.reviews import Reviews
from pyramide.service.stats.schemas import Review, ReviewDecisionBody, ReviewsPage

AdminRequest = Request[Principal, None, State]
_DECISION = TypeAdapter(ReviewDecisionBody)


def _moment(ms: int | None) -> datetime | None:
    return None if ms is None else datetime.fromtimestamp(ms / 1000, UTC)


def _app_of(item: dict[str, Any]) -> UUID | None:
    return None if item.get("app_id") is None else UUID(item["app_id"])


def review_view(item: dict[str, Any]) -> Review:
    """A kept review as the admin routes show it."""
    result = item["result"]
    clean = result["undos"] == 0 and item["hints"] == 0
    return Review(
        id=item["id"],
        challenge=item["challenge"],
        player=item["player"],
        name=item["name"],
        identity=item["identity"],
        app=item["app"],
        status=item["status"],
        held_at=datetime.fromtimestamp(item["held_ms"] / 1000, UTC),
        decided_at=_moment(item["decided_ms"]),
        decided_by=item["decided_by"],
        reason=item["reason"],
        reasons=item.get("reasons", [HoldReason.CADENCE]),  # kept before reasons were: a cadence hold
        screen=item.get("screen"),
        min_move_ms=item["min_move_ms"],
        median_interval_ms=item["median_interval_ms"],
        per_move_ms=item["per_move_ms"],
        elapsed_ms=result["elapsed_ms"],
        moves=result["moves"],
        undos=result["undos"],
        hints=item["hints"],
        tier="clean" if clean else "assisted",
        operations=item.get("operations", len(item["record"])),
        times_ms=result["times"] or [],
        record=item["record"],
    )


class ReviewController(Controller):
    path = "/reviews"
    tags = ["admin"]

    @get(
        "/",
        operation_id="listReviews",
        summary="Challenge wins held for review: pending first (oldest first), then decided ones (latest first)",
        description="A win whose moves came faster than `PYRAMIDE_MIN_MOVE_MS` each (median or mean interval), or"
        " that the screening held (faster than a person who knew the shortest line, foresight of the hidden stock,"
        " or not judged in time), waits here instead of entering its board, with its `reasons` and the screening's"
        " figures (`screen`: the sealed deal's par among them, shown to moderators only). The operator sees every"
        " review; an app with the `moderation` scope its own players' (a page may then hold fewer than `limit`).",
        responses=problems(400, 401, 404),
    )
    async def page(
        self,
        request: AdminRequest,
        reviews: Injected[Reviews],
        limit: Limit = DEFAULT_LIMIT,
        cursor: ReviewsCursor = None,
    ) -> ReviewsPage:
        check_paging_query(request)
        page = await reviews.page(cursor, limit)
        shown = [review_view(e) for e in page.entries if request.user.may_moderate(_app_of(e))]
        return ReviewsPage(entries=shown, next_cursor=page.next_cursor)

    @post(
        "/{review_id:str}/accept",
        operation_id="acceptReview",
        kept_answer=True,
        opt={WHILE_FULL: OPERATOR},
        request_body=ReviewDecisionBody,
        status_code=200,
        summary="Accept a held win: it enters its board as it would have (a banned player's once unbanned)",
        description="The operator's key only: an app may reject its own players' held wins but not accept them"
        " (403 `operator_only` for any app key, nothing written). Accepting again changes nothing (an entry annulled"
        " since stays off); a rejected one is 409 `review_already_decided`. Audited.",
        responses=problems(400, 401, 403, 404, 409, 413, 422),
    )
    async def accept(
        self,
        request: AdminRequest,
        review_id: IdText,
        reviews: Injected[Reviews],
        leaderboards: Injected[Leaderboards],
        audit: Injected[AuditLog],
    ) -> Review:
        item, changed = await _decide(request, review_id, "accepted", reviews, audit)
        if changed:  # accepting again enters nothing: an entry annulled since stays off its board
            result = Reviews.result_of(item)
            await leaderboards.enter(result, item["hints"])
            if result.board is not None:  # a banned player's win goes straight to what the ban keeps (none else)
                await leaderboards.set_aside(result.player, [result.board])
        return review_view(item)

    @post(
        "/{review_id:str}/reject",
        operation_id="rejectReview",
        kept_answer=True,
        opt={WHILE_FULL: OPERATOR},
        request_body=ReviewDecisionBody,
        status_code=200,
        summary="Reject a held win: it never enters the board",
        description="Rejecting again changes nothing; an accepted review is 409 `review_already_decided`. 403"
        " `forbidden` for an app that may not moderate the player. Audited.",
        responses=problems(400, 401, 403, 404, 409, 413, 422),
    )
    async def reject(
        self, request: AdminRequest, review_id: IdText, reviews: Injected[Reviews], audit: Injected[AuditLog]
    ) -> Review:
        item, _ = await _decide(request, review_id, "rejected", reviews, audit)
        return review_view(item)


async def _decide(
    request: AdminRequest, review_id: str, status: str, reviews: Reviews, audit: AuditLog
) -> tuple[dict[str, Any], bool]:
    """Take the decision if the caller may (403 ``operator_only`` for an app's accept, ``forbidden`` for an app
    rejecting another's player's win), and audit it when it was taken now (then ``True`` beside the review)."""
    body = await parse_body(request, _DECISION)
    review = id_of(review_id)
    if status == "accepted" and not request.user.is_operator:
        raise DomainError(ErrorCode.OPERATOR_ONLY)
    item = await reviews.get(review)
    if not request.user.may_moderate(_app_of(item)):
        raise DomainError(ErrorCode.FORBIDDEN)
    decided = await reviews.decide(review, status, request.user.actor, body.reason, now_ms(reviews.clock))
    if decided.changed:
        action = "accept_review" if status == "accepted" else "reject_review"
        detail = {"review": str(review), "challenge": str(item["challenge"])}
        await audit.record(request.user, action, f"player:{item['player']}", body.reason, detail)
    return decided.review, decided.changed
