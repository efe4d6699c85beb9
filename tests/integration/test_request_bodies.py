"""Request bodies (issue 59): a whole number written with a fraction is an integer (JSON Schema's ``integer`` admits
``455.0``: a schema-valid ``"address_moves": 455.0`` was refused 422; a real fraction still is), and a body that is not
JSON is 415."""

from __future__ import annotations

from typing import Any

from pyramide.service.infra.settings import Settings
from tests.support.operators import OPERATOR
from tests.support.webhooks import service

FORM = "application/x-www-form-urlencoded"


def test_a_whole_number_with_a_fraction_is_taken_as_an_integer(settings: Settings) -> None:
    with service(settings) as client:
        for written in ("455.0", "4.55e2"):
            body = '{"name": "Kártya Klub", "limits": {"address_moves": %s}}' % written  # noqa: UP031 - raw JSON
            created = client.post(
                "/v1/admin/apps", content=body, headers={**OPERATOR, "Content-Type": "application/json"}
            )
            assert created.status_code == 201, (written, created.text)
        half = '{"name": "Kártya Klub", "limits": {"address_moves": 455.5}}'
        refused = client.post("/v1/admin/apps", content=half, headers={**OPERATOR, "Content-Type": "application/json"})
        assert refused.status_code == 422, refused.text
        assert refused.json()["errors"][0]["pointer"] == "/limits/address_moves"


def test_a_form_body_is_415_not_400(client: Any, player: dict[str, str]) -> None:
    """A form body was 400 ``bad_request``, which says nothing of why; it is 415. JSON is read under any type (``curl
    -d '{...}'`` sends a form's type), with none, as ``application/json; charset=utf-8`` or a ``+json`` type."""
    form = client.post("/v1/games", content="code=PY1-N-AAAAAAS", headers={**player, "Content-Type": FORM})
    assert form.status_code == 415, form.text
    assert form.json()["code"] == "unsupported_media_type"
    for kind in ("application/json; charset=utf-8", "application/merge-patch+json", FORM, "text/plain"):
        game = client.post("/v1/games", content='{"code": "PY1-N-AAAAAAS"}', headers={**player, "Content-Type": kind})
        assert game.status_code == 201, (kind, game.text)
    declared = client.get("/schema/openapi.json").json()["paths"]["/v1/games"]["post"]["responses"]
    assert "415" in declared
