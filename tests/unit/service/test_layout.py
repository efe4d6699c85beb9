"""The service's layout, kept by a test (see CONTRIBUTING.md): what may import what, beyond the import-linter
contracts of ``pyproject.toml`` (run by ``scripts/test``: the layers, and no import cycle in any package)."""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Final, get_args

import pytest
from pydantic import BaseModel

import pyramide
import pyramide.engine.messages
import pyramide.service
from pyramide.service.app import create_app
from pyramide.service.infra.settings import Settings

SERVICE = Path(pyramide.service.__file__).parent
DOMAINS = ("accounts", "challenges", "deals", "events", "games", "players", "stats")
"""The domains, and ``players`` (the routes of ``/v1/players``, composing the accounts, stats and games domains):
each keeps to a domain's rules below, so ``players`` too reaches another package only through its public names."""
HTTP_EDGES = ("authentication", "dependencies")
"""Modules of a domain that speak HTTP besides its controllers: the bearer-token middleware (``accounts``), what the
wiring injects into the game routes (``games``)."""


def _imports(path: Path) -> Iterator[str]:
    """Every module ``path`` imports, at any depth (also inside functions and ``TYPE_CHECKING``)."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            yield node.module


def _modules(package: str) -> list[Path]:
    """The package's modules, its subpackages' included (``infra/keyspace/``)."""
    return sorted((SERVICE / package).rglob("*.py"))


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
        if "controller" in path.stem or path.stem in HTTP_EDGES:
            continue
        for name in _imports(path):
            http = name.startswith("pyramide.service.http") and name != "pyramide.service.http.schemas"
            assert not http and not name.startswith("litestar"), f"{domain}/{path.name} imports {name}"


def _request_models() -> set[str]:
    """The models of every request body the handlers validate (their ``request_body``): each body's model and the
    members of its union (the document may declare a union as one object: ``createGame``)."""

    def named(body: object) -> Iterator[str]:
        if isinstance(body, type) and issubclass(body, BaseModel):
            yield body.__name__
        for inner in get_args(body):
            yield from named(inner)

    app = create_app(Settings())
    handlers = (h for route in app.routes for h in getattr(route, "route_handlers", ()))
    return {
        name for handler in handlers if "request_body" in handler.opt for name in named(handler.opt["request_body"])
    }


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


def test_no_handler_looks_anything_up_in_the_application_state() -> None:
    """Handlers get their services by dependency injection and their player from the authentication middleware."""
    for path in SERVICE.rglob("*.py"):
        assert "app.state" not in path.read_text(encoding="utf-8"), path.relative_to(SERVICE)


def test_no_module_types_redis_as_any() -> None:
    for path in SERVICE.rglob("*.py"):
        assert "Redis = Any" not in path.read_text(encoding="utf-8"), path.relative_to(SERVICE)


STATUS_WORDS = {"in_progress", "won", "stuck", "lost", "abandoned"}


def _status_words(path: Path) -> list[str]:
    """Whole string constants that are a status word (a piece of an f-string, as in a key name, is not one)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    pieces = {id(v) for node in ast.walk(tree) if isinstance(node, ast.JoinedStr) for v in node.values}
    return [
        f"{path.relative_to(SERVICE)}:{node.lineno} {node.value!r}"
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and node.value in STATUS_WORDS and id(node) not in pieces
    ]


def test_a_games_status_is_spelled_only_in_the_one_enums_module() -> None:
    """``status.GameStatus`` is the one statement of the status values; everything else names its members."""
    found = [w for path in sorted(SERVICE.rglob("*.py")) if path != SERVICE / "status.py" for w in _status_words(path)]
    assert not found, found


HUNGARIAN: Final = re.compile(r"[áéíóöőúüűÁÉÍÓÖŐÚÜŰ]")
"""Letters of Hungarian that English has not: a text of a player's written in code rather than in the catalogue."""


def test_no_message_text_outside_the_catalogue() -> None:
    """Every text a player reads is in the message catalogue (``web/messages.json``): no Hungarian in the
    service's or the page's code."""
    web = Path(pyramide.engine.messages.CATALOGUE_FILE).parent
    code = [*Path(pyramide.__file__).parent.rglob("*.py"), *web.glob("*.js")]
    assert [p.name for p in code if HUNGARIAN.search(p.read_text(encoding="utf-8"))] == []


def test_the_openapi_document_names_no_operation() -> None:
    """Headers, security and links come from each handler's own metadata (its decorator), never from a list of
    operation ids kept in the modules that build the document (``http/openapi*.py``)."""
    document = json.loads((SERVICE.parents[2] / "openapi" / "openapi.json").read_text(encoding="utf-8"))
    operations = {o["operationId"] for path in document["paths"].values() for o in path.values()}
    modules = sorted((SERVICE / "http").glob("openapi*.py"))
    assert len(modules) > 1
    trees = [ast.parse(path.read_text(encoding="utf-8")) for path in modules]
    named = {n.value for tree in trees for n in ast.walk(tree) if isinstance(n, ast.Constant) and n.value in operations}
    assert named == set()


def _key_literals(path: Path) -> Iterator[str]:
    """Every string in ``path`` that begins a Redis key name (``pyr:``): a literal, or an f-string's first part."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        first = node.values[0] if isinstance(node, ast.JoinedStr) and node.values else node
        if isinstance(first, ast.Constant) and isinstance(first.value, str) and first.value.startswith("pyr:"):
            yield first.value


def test_every_key_name_is_built_in_the_keyspace_module() -> None:
    """``infra/keyspace/`` names every Redis key (hash tags, prefixes, patterns); nothing else spells one out."""
    home = SERVICE / "infra" / "keyspace"
    assert list(_key_literals(home / "players.py")), "the check finds the keyspace's own key names"
    for path in SERVICE.rglob("*.py"):
        if home not in path.parents:
            assert not list(_key_literals(path)), f"{path.relative_to(SERVICE)} spells out a key: name it in keyspace"


def test_lua_lives_only_in_lua_files_beside_the_loader() -> None:
    """Every script is a file of ``infra/lua`` run through ``infra/scripts.py``: no Lua in a Python string, no
    script registered or evaluated around the loader."""
    lua = SERVICE / "infra" / "lua"
    assert sorted(p.parent for p in SERVICE.rglob("*.lua")) == [lua] * len(list(lua.glob("*.lua")))
    loader, client = SERVICE / "infra" / "scripts.py", SERVICE / "infra" / "redis.py"
    transport = SERVICE / "infra" / "pipelined.py"  # sends the loader's EVALSHA
    for path in SERVICE.rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        for lua_call in ("redis.call(", "redis.pcall(", *(() if path == loader else ("KEYS[", "ARGV["))):
            assert lua_call not in text, f"{path.relative_to(SERVICE)} holds Lua ({lua_call})"
        if path not in (loader, client, transport):
            for direct in ("register_script", "evalsha(", "script_load(", ".eval("):
                assert direct not in text, f"{path.relative_to(SERVICE)} runs a script ({direct}): use Script"


def test_every_route_gets_its_services_by_injection() -> None:
    """One mechanism for every route (``services.ServicesPlugin``): the routes that change a game too name their
    services as dependencies, instead of reading them from a controller class built for each app."""
    app = create_app(Settings())
    handlers = {h.operation_id: h for route in app.routes for h in getattr(route, "route_handlers", ())}
    for operation in ("createGame", "getGame", "playMove", "tap", "abandonGame", "getHint", "listPlayerGames"):
        handler = handlers[operation]
        provided = handler.resolve_dependencies()
        assert [p for p in handler.parsed_fn_signature.parameters if p in provided], operation
