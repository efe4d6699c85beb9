"""The error catalogue: a page for every code a problem can carry, at the problem's ``type``
(``GET /problems/<code>``), served by the service itself with no network: its title, status, when it happens and
what to do, in the caller's language. Its texts are in ``web/messages.json`` (``problem_when``, ``problem_todo``);
docs/api.md's list of codes is :func:`docs_table` of the same catalogue."""

from __future__ import annotations

from typing import Final

from litestar import Request, Response, get
from litestar.params import FromPath
from pydantic import BaseModel

from pyramide.engine.messages import render, section
from pyramide.service.errors import DomainError, ErrorCode
from pyramide.service.http.locale import locale_for
from pyramide.service.http.problems import PROBLEM_PAGES, PROBLEM_STATUS, PROBLEM_STATUSES, problem_type, title

WHEN: Final = section("problem_when")
TODO: Final = section("problem_todo")


class ProblemPage(BaseModel):
    """What a problem's code means: its ``title`` (as the problem says it), the ``status`` it comes with (its
    usual one) and ``statuses``, every status it may come with, ``when`` it happens and ``what_to_do``, in the
    response's language."""

    code: str
    type: str
    status: int
    statuses: list[int]
    title: str
    when: str
    what_to_do: str


def page(code: str, locale: str) -> ProblemPage:
    return ProblemPage(
        code=code,
        type=problem_type(code),
        status=PROBLEM_STATUS[code],
        statuses=list(PROBLEM_STATUSES[code]),
        title=title(code, locale),
        when=render(WHEN[code], locale, {}),
        what_to_do=render(TODO[code], locale, {}),
    )


@get(f"{PROBLEM_PAGES}/{{code:str}}", include_in_schema=False, exclude_from_auth=True, sync_to_thread=False)
def problem_page(request: Request, code: FromPath[str]) -> Response[ProblemPage]:  # type: ignore[type-arg]
    """The page of ``code``; 404 ``not_found`` for a code the service never sends."""
    if code not in PROBLEM_STATUS:
        raise DomainError(ErrorCode.NOT_FOUND)
    locale = locale_for(request)
    return Response(page(code, locale), headers={"Content-Language": locale, "Vary": "Accept-Language"})


def docs_table() -> str:
    """docs/api.md's list of error codes: one row per code, with every status it comes with, its English title
    and page."""
    rows = [
        f"| `{code}` | {', '.join(map(str, statuses))} | {title(code, 'en')} | `{problem_type(code)}` |"
        for code, statuses in sorted(PROBLEM_STATUSES.items())
    ]
    return "\n".join(["| Code | Status | Title | Page |", "| --- | --- | --- | --- |", *rows]) + "\n"
