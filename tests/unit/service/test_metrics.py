"""Request metrics: what a request that never completes is counted as."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from prometheus_client import REGISTRY

from pyramide.service.infra.logs import RequestLog
from pyramide.service.infra.metrics import CLIENT_CLOSED, RequestMetrics
from pyramide.service.infra.settings import Logs


def _sample(name: str, status: int | str, app_name: str) -> float | None:
    labels = {"method": "GET", "path": "/x/{id}", "status_code": str(status), "app_name": app_name}
    return REGISTRY.get_sample_value(name, labels)


def _scope() -> dict[str, Any]:
    return {"type": "http", "method": "GET", "path": "/x/1", "path_template": "/x/{id}"}


async def _nothing() -> dict[str, Any]:
    return {"type": "http.disconnect"}


async def _ignore(message: Any) -> None:
    return None


def test_a_request_its_client_abandons_is_counted_apart_not_as_an_error() -> None:
    async def waits_forever(scope: Any, receive: Any, send: Any) -> None:
        await asyncio.Event().wait()

    metered = RequestMetrics(app_name="abandoned").middleware(waits_forever)

    async def run() -> None:
        task: asyncio.Task[None] = asyncio.create_task(metered(_scope(), _nothing, _ignore))  # type: ignore[arg-type]
        await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(run())
    assert _sample("litestar_requests_total", CLIENT_CLOSED, "abandoned") == 1
    assert (_sample("litestar_request_duration_seconds_sum", CLIENT_CLOSED, "abandoned") or 0) >= 0.01
    assert _sample("litestar_requests_error_total", CLIENT_CLOSED, "abandoned") is None
    assert _sample("litestar_requests_in_progress", 200, "abandoned") == 0


def test_an_exception_that_escapes_the_handler_is_a_timed_server_error() -> None:
    async def fails(scope: Any, receive: Any, send: Any) -> None:
        await asyncio.sleep(0.01)
        raise RuntimeError("escaped")

    metered = RequestMetrics(app_name="escaped").middleware(fails)
    with pytest.raises(RuntimeError):
        asyncio.run(metered(_scope(), _nothing, _ignore))  # type: ignore[arg-type]
    assert _sample("litestar_requests_error_total", 500, "escaped") == 1
    assert (_sample("litestar_request_duration_seconds_sum", 500, "escaped") or 0) >= 0.01


def test_the_request_log_and_the_metrics_share_one_wrapper_of_send() -> None:
    """Issue 58: a response's messages pass through the service's one wrapper of ``send`` (the request log's), and
    the metrics read the status and the body's time it noted: the answer is counted under its own status."""
    sends: list[Any] = []

    async def answers(scope: Any, receive: Any, send: Any) -> None:
        sends.append(send)
        await send({"type": "http.response.start", "status": 404, "headers": []})
        await send({"type": "http.response.body", "body": b"{}", "more_body": False})

    sent: list[Any] = []

    async def out(message: Any) -> None:
        sent.append(message)

    def below_the_log(app: Any) -> Any:
        async def seen(scope: Any, receive: Any, send: Any) -> None:
            sends.append(send)
            await app(scope, receive, send)

        return seen

    metered = RequestMetrics(app_name="one-wrapper").middleware(answers)
    logged = RequestLog(Logs(request_log_level="DEBUG")).wrap(below_the_log(metered))
    scope = {**_scope(), "headers": [(b"x-request-id", b"one-wrapper-1")]}
    asyncio.run(logged(scope, _nothing, out))  # type: ignore[arg-type]
    assert sends[0] is sends[1], "the metrics wrapped send again"
    assert (b"x-request-id", b"one-wrapper-1") in sent[0]["headers"]
    assert _sample("litestar_requests_total", 404, "one-wrapper") == 1
    assert (_sample("litestar_request_duration_seconds_sum", 404, "one-wrapper") or 0) > 0


def test_the_metrics_alone_still_see_the_status() -> None:
    """An app built without the request log: the metrics wrap ``send`` themselves."""

    async def answers(scope: Any, receive: Any, send: Any) -> None:
        await send({"type": "http.response.start", "status": 201, "headers": []})
        await send({"type": "http.response.body", "body": b"", "more_body": False})

    metered = RequestMetrics(app_name="alone").middleware(answers)
    asyncio.run(metered(_scope(), _nothing, _ignore))  # type: ignore[arg-type]
    assert _sample("litestar_requests_total", 201, "alone") == 1
