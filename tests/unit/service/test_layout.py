"""The service's layout, kept by a test (see CONTRIBUTING.md): what may import what."""

from __future__ import annotations

import ast
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

import pyramide.service
from pyramide.service.app import create_app
from pyramide.service.infra.settings import Settings

SERVICE = Path(pyramide.service.__file__).parent
OPENAPI = SERVICE.parents[2] / "openapi" / "openapi.json"
DOMAINS = ("games", "players", "stats", "deals", "privacy", "challenges", "apps", "moderation")


def _imports(path: Path) -> Iterator[str]:
    """Every module ``path`` imports, at any depth (also inside functions and ``TYPE_CHECKING``)."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            yield node.module


def _modules(package: str) -> list[Path]:
    return sorted((SERVICE / package).glob("*.py"))


@pytest.mark.parametrize("domain", DOMAINS)
def test_a_domain_uses_another_only_through_its_public_names_and_schemas(domain: str) -> None:
    """``pyramide.service.deals`` (its ``__init__``) or ``pyramide.service.deals.schemas`` (the shared HTTP
    contract), never another domain's internals."""
    for path in _modules(domain):
        for name in _imports(path):
            parts = name.split(".")
            if parts[:2] != ["pyramide", "service"] or len(parts) < 3 or parts[2] not in DOMAINS:
                continue
            if parts[2] != domain:
                assert len(parts) == 3 or parts[3:] == ["schemas"], f"{domain}/{path.name} imports {name}"


@pytest.mark.parametrize("domain", DOMAINS)
def test_domain_services_know_nothing_of_http(domain: str) -> None:
    """Only controllers speak HTTP; services, stores and schemas take and return domain values and raise domain
    errors (``pyramide.service.errors``), which one exception handler turns into problem+json."""
    for path in _modules(domain):
        if "controller" in path.stem:
            continue
        for name in _imports(path):
            http = name.startswith("pyramide.service.http") and name != "pyramide.service.http.schemas"
            assert not http and not name.startswith("litestar"), f"{domain}/{path.name} imports {name}"


def _request_models() -> set[str]:
    """The models of every request body in the API document: each body's schema and the variants of its union."""
    document = json.loads(OPENAPI.read_text(encoding="utf-8"))
    components = document["components"]["schemas"]

    def named(schema: dict[str, object]) -> Iterator[str]:
        ref = schema.get("$ref")
        if isinstance(ref, str):
            name = ref.rsplit("/", 1)[-1]
            yield name
            yield from named(components[name])
        for variants in (schema.get("oneOf"), schema.get("anyOf")):
            for variant in variants if isinstance(variants, list) else ():
                yield from named(variant)

    bodies = (op["requestBody"] for ops in document["paths"].values() for op in ops.values() if "requestBody" in op)
    return {name for body in bodies for content in body["content"].values() for name in named(content["schema"])}


@pytest.mark.parametrize("domain", DOMAINS)
def test_domain_services_take_domain_values_not_request_bodies(domain: str) -> None:
    """Controllers turn a request body into a domain value (a command such as ``games.commands.Move``, a
    ``games.creation.NewGame``); services, stores and serialisers never see the body's model."""
    models = _request_models()
    assert {"PairMove", "CardTap", "CodeGameBody", "CreatePlayerBody"} <= models
    for path in _modules(domain):
        if "controller" in path.stem or path.stem == "schemas":
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        imported = {a.asname or a.name for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) for a in n.names}
        assert not imported & models, f"{domain}/{path.name} takes request bodies {sorted(imported & models)}"


def test_infrastructure_imports_no_domain_and_no_http() -> None:
    """Settings, Redis, the embedded server, supervision, logs, metrics: usable by every layer above them."""
    above = tuple(f"pyramide.service.{p}" for p in (*DOMAINS, "http", "app", "services", "serve"))
    for path in _modules("infra"):
        for name in _imports(path):
            assert not name.startswith(above), f"infra/{path.name} imports {name}"


def test_http_plumbing_imports_no_domain_but_the_players_and_apps_it_authenticates() -> None:
    domains = tuple(f"pyramide.service.{d}" for d in DOMAINS)
    for path in _modules("http"):
        for name in _imports(path):
            allowed = name in ("pyramide.service.players", "pyramide.service.apps")
            assert allowed or not name.startswith(domains), f"http/{path.name} imports {name}"


def test_domain_errors_import_nothing_of_the_service() -> None:
    assert not [n for n in _imports(SERVICE / "errors.py") if n.startswith("pyramide.service")]


def test_no_handler_looks_anything_up_in_the_application_state() -> None:
    """Handlers get their services by dependency injection and their player from the authentication middleware."""
    for path in SERVICE.rglob("*.py"):
        assert "app.state" not in path.read_text(encoding="utf-8"), path.relative_to(SERVICE)


def test_no_module_types_redis_as_any() -> None:
    for path in SERVICE.rglob("*.py"):
        assert "Redis = Any" not in path.read_text(encoding="utf-8"), path.relative_to(SERVICE)


def test_every_route_gets_its_services_by_injection() -> None:
    """One mechanism for every route (``services.ServicesPlugin``): the routes that change a game too name their
    services as dependencies, instead of reading them from a controller class built for each app."""
    app = create_app(Settings())
    handlers = {h.operation_id: h for route in app.routes for h in getattr(route, "route_handlers", ())}
    for operation in ("createGame", "getGame", "playMove", "tap", "abandonGame", "getHint", "listPlayerGames"):
        handler = handlers[operation]
        provided = handler.resolve_dependencies()
        assert [p for p in handler.parsed_fn_signature.parameters if p in provided], operation
