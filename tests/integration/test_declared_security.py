"""What the schema says of each operation matches what it reads (issue 59, D4 and smaller items): ``getChallenge``
answers ``you`` per caller when sent a token but was declared public (``security: []``), so a generated SDK never
sent one."""

from __future__ import annotations

from typing import Any

from litestar.testing import TestClient

from tests.support.schema_refs import resolved

OPTIONAL_BEARER: list[dict[str, list[str]]] = [{}, {"bearerAuth": []}]


def test_get_challenge_declares_the_token_it_reads(client: TestClient[Any]) -> None:
    schema = resolved(client.get("/schema/openapi.json").json())
    operation = schema["paths"]["/v1/challenges/{challenge_id}"]["get"]
    assert operation["security"] == OPTIONAL_BEARER
    assert schema["paths"]["/v1/challenges/current"]["get"]["security"] == OPTIONAL_BEARER  # as its sibling


def test_the_stream_operations_declare_last_event_id(client: TestClient[Any]) -> None:
    """A client resumes a stream with ``Last-Event-ID`` (D5): every stream operation declares the header."""
    schema = resolved(client.get("/schema/openapi.json").json())
    streams = [
        operation
        for item in schema["paths"].values()
        for method, operation in item.items()
        if method == "get" and operation["operationId"].startswith("stream")
    ]
    assert len(streams) == 3
    for operation in streams:
        names = [parameter.get("name") for parameter in operation["parameters"]]
        assert "Last-Event-ID" in names, operation["operationId"]


def test_annul_declares_what_a_board_name_is(client: TestClient[Any]) -> None:
    """``annulLeaderboardEntry``'s ``board`` had no pattern, so a schema-valid name was 422 (issue 59)."""
    schema = resolved(client.get("/schema/openapi.json").json())
    [operation] = [
        operation
        for item in schema["paths"].values()
        for operation in item.values()
        if isinstance(operation, dict) and operation.get("operationId") == "annulLeaderboardEntry"
    ]
    [board] = [parameter for parameter in operation["parameters"] if parameter.get("name") == "board"]
    assert "pattern" in board["schema"]
