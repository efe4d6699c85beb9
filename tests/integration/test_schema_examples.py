"""Every body in the committed OpenAPI document has an example, valid against its own schema (issue 44, item 11):
what a generated client's docs and Swagger UI show, and what schemathesis's examples phase sends."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema_rs
import pytest

from tests.support.schema_refs import resolved

DOCUMENT: dict[str, Any] = json.loads((Path(__file__).parents[2] / "openapi" / "openapi.json").read_text())


def _bodies() -> list[tuple[str, dict[str, Any]]]:
    """Every operation's every body, a shared response's in each operation that uses it."""
    bodies = []
    for path, methods in resolved(DOCUMENT)["paths"].items():
        for method, operation in methods.items():
            request = operation.get("requestBody", {})
            for media_type, media in request.get("content", {}).items():
                bodies.append((f"{method.upper()} {path} request {media_type}", media))
            for status, response in operation.get("responses", {}).items():
                for media_type, media in response.get("content", {}).items():
                    bodies.append((f"{method.upper()} {path} {status} {media_type}", media))
    return bodies


def _examples(media: dict[str, Any]) -> list[Any]:
    named = [example["value"] for example in media.get("examples", {}).values()]
    return ([media["example"]] if "example" in media else []) + named


def _validator(schema: dict[str, Any]) -> jsonschema_rs.Draft202012Validator:
    """A validator for ``schema`` (JSON Schema 2020-12, as OpenAPI 3.1 uses, formats checked) that resolves
    ``#/components/schemas/...`` in the document: the components ride along in the root."""
    return jsonschema_rs.Draft202012Validator({**schema, "components": DOCUMENT["components"]}, validate_formats=True)


BODIES = _bodies()


@pytest.mark.parametrize(("where", "media"), BODIES, ids=[where for where, _ in BODIES])
def test_every_body_has_a_valid_example(where: str, media: dict[str, Any]) -> None:
    schema = media["schema"]
    examples = _examples(media)
    assert examples, f"{where}: no example"
    validator = _validator(schema)
    for example in examples:
        errors = [f"{'/'.join(map(str, e.instance_path))}: {e.message}" for e in validator.iter_errors(example)]
        assert not errors, f"{where}: {errors}"


def test_every_schema_example_is_valid_against_its_schema() -> None:
    for name, schema in DOCUMENT["components"]["schemas"].items():
        validator = _validator({"$ref": f"#/components/schemas/{name}"})
        for example in schema.get("examples", []):
            assert not list(validator.iter_errors(example)), (name, example)
