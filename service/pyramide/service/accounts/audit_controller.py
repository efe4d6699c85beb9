"""The audit log, read by the operator (everything) or an app (its own actions)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Any

from litestar import Controller, Request, get
from litestar.datastructures import State
from litestar.params import QueryParameter

from pyramide.service.accounts.audit import AuditLog
from pyramide.service.accounts.moderation_schemas import AuditEntry, AuditPage
from pyramide.service.accounts.principal import Principal
from pyramide.service.http.injection import Injected
from pyramide.service.http.paging import DEFAULT_LIMIT, Limit, check_paging_query
from pyramide.service.http.responses import problems

AdminRequest = Request[Principal, None, State]
AuditCursor = Annotated[
    str | None,
    QueryParameter(
        required=False,
        pattern=r"^[0-9]{1,15}-[0-9]{1,10}$",
        description="Where the page starts: the previous page's `next_cursor`; omit for the first page.",
    ),
]


def _entry(kept: dict[str, Any]) -> AuditEntry:
    at = datetime.fromtimestamp(kept["at_ms"] / 1000, UTC)
    return AuditEntry(at=at, **{k: v for k, v in kept.items() if k != "at_ms"})


class AuditController(Controller):
    path = "/audit"
    tags = ["admin"]

    @get(
        "/",
        operation_id="listAuditLog",
        summary="Every admin action, newest first: who, when, what and why",
        description="The operator reads every entry; an app only its own actions (from a log of its own, ids and"
        " cursors its own too). A cursor at the log's start (`0-0`) is an empty last page.",
        responses=problems(400, 401, 404),
    )
    async def page(
        self,
        request: AdminRequest,
        audit: Injected[AuditLog],
        limit: Limit = DEFAULT_LIMIT,
        cursor: AuditCursor = None,
    ) -> AuditPage:
        check_paging_query(request)
        principal = request.user
        entries, next_cursor = await audit.page(cursor, limit, None if principal.is_operator else principal.app_id)
        return AuditPage(entries=[_entry(e) for e in entries], next_cursor=next_cursor or None)
