"""Framework code the service copies or leans on, past the public API: pinned, and fingerprinted here.

Policy (CONTRIBUTING.md, "Private framework code"): the service uses a dependency's private code only where its
public API has no equivalent or measurably costs on the hot path. That dependency is then pinned in pyproject.toml to
the minor version it was tested with, the module that uses it says so in its docstring, and every upstream piece it
copies, overrides, calls or reads is fingerprinted below by the sha256 of its source. An upgrade that changes one
fails this test, naming our module: read the upstream change, carry it into our copy (or adapt our use), run that
module's tests, and only then put the new hash (the failure prints it) here. A new private use gets its entry too,
and :func:`test_no_other_private_import` keeps private imports from coming in unnoticed.
"""

from __future__ import annotations

import ast
import hashlib
import importlib
import importlib.metadata
import inspect
import tomllib
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import resource_tracker
from pathlib import Path
from typing import Final, NamedTuple

import pytest
from packaging.requirements import Requirement

import pyramide.service


class Upstream(NamedTuple):
    """Pieces of one upstream module (``""``: the whole module) by qualified name, each with the first 16 hex digits
    of the sha256 of its source, and our module to re-check when one changes (with its tests)."""

    module: str
    ours: str
    pieces: dict[str, str]


SERVER: Final = "http/server.py (GuardedProtocol; tests: tests/integration/test_http_protocol.py)"
CORS: Final = "http/cors.py (VaryKeepingCORS; tests: tests/integration/test_response_headers.py)"
APP: Final = "app.py (create_app wraps asgi_handler again; tests: tests/integration/test_response_headers.py)"
PIPELINED: Final = "infra/pipelined.py (_Link; tests: tests/integration/test_pipelined_scripts.py)"
LEAN: Final = "infra/redis.py (LeanCommands; tests: tests/unit/service/test_redis_client.py)"

PINNED: Final = (
    # GuardedProtocol copies data_received (adding the guards), calls the private helpers the copy calls, extends
    # the callbacks, replaces eof_received (upstream's does nothing), and reads and sets the attributes that
    # __init__, on_url, on_header and on_headers_complete make (url, headers, cycle, pipeline, flow, connections).
    Upstream(
        "uvicorn.protocols.http.httptools_impl",
        SERVER,
        {
            "HttpToolsProtocol.data_received": "010a7ae59a5d3b1a",
            "HttpToolsProtocol.__init__": "4f08999410347141",
            "HttpToolsProtocol.connection_made": "6efb565ff3d36b91",
            "HttpToolsProtocol.connection_lost": "c91a4c9bf2e29c55",
            "HttpToolsProtocol.eof_received": "5652627579a02369",
            "HttpToolsProtocol._unset_keepalive_if_required": "00a6a4e47214e68e",
            "HttpToolsProtocol._should_upgrade": "8fcad1ab8e096739",
            "HttpToolsProtocol.handle_websocket_upgrade": "179c4f769386ab89",
            "HttpToolsProtocol.on_message_begin": "96d377fdc7c2baef",
            "HttpToolsProtocol.on_url": "37be44e962b04ca8",
            "HttpToolsProtocol.on_header": "65d62c044f61fdbd",
            "HttpToolsProtocol.on_headers_complete": "1ea8589acfad92d8",
            "HttpToolsProtocol.on_message_complete": "1fbad42dc31fc01f",
            "HttpToolsProtocol.shutdown": "d7351fa33f00d430",
            "HttpToolsProtocol.pause_writing": "17a8fd215d96a13c",
            "HttpToolsProtocol.resume_writing": "7844bbaa8cceb1ef",
            "RequestResponseCycle": "e67d470d435dcc1c",  # its flags and event, set when a request is refused
        },
    ),
    Upstream("uvicorn.protocols.http.flow_control", SERVER, {"FlowControl": "126debcdaa894c83"}),
    # VaryKeepingCORS subclasses the internal CORS middleware (send_wrapper extended, built again from app and
    # config), found as the outer layer of the app's ASGI handler, which app.py wraps again.
    Upstream("litestar.middleware._internal.cors", CORS, {"": "6b345f65fe0f82ab"}),
    Upstream("litestar.app", CORS, {"Litestar._create_asgi_handler": "f40275d36f4c028e"}),
    Upstream("litestar.app", APP, {"Litestar.__call__": "e203fc223b78712d"}),
    # The pipelined script calls take a connected connection's streams (set by _connect, after the handshake of
    # connect) and parse replies as redis-py's hiredis parser does, with its parse_error (and EXCEPTION_CLASSES).
    Upstream("redis._parsers.hiredis", PIPELINED, {"_AsyncHiredisParser.on_connect": "5c7b848496314124"}),
    Upstream("redis._parsers.base", PIPELINED, {"BaseParser": "cf1d4e78973782ce"}),
    Upstream(
        "redis.asyncio.connection",
        PIPELINED,
        {
            "AbstractConnection.connect": "08c5daf33e6e52ef",
            "AbstractConnection.connect_check_health": "5cfa2c49e83e3645",
            "Connection._connect": "24cd655d5f27ddbb",
            "UnixDomainSocketConnection._connect": "c46949736ceeafad",
        },
    ),
    # Through Sentinel the pipelined connection is a SentinelManagedConnection: its connect finds the master and
    # ends in Connection._connect (the streams taken); its read_response's READONLY handling is mirrored by _Link.
    Upstream(
        "redis.asyncio.sentinel",
        PIPELINED,
        {
            "SentinelManagedConnection.connect": "1ba5ea04207af629",
            "SentinelManagedConnection._connect_retry": "62b751ba11735f9d",
            "SentinelManagedConnection.connect_to": "cfd2d5d8a18d71cb",
            "SentinelManagedConnection.read_response": "843a8258ad0dddfd",
        },
    ),
    # LeanCommands replaces pack_command and switches off send_packed_command's write timeout.
    Upstream(
        "redis.asyncio.connection",
        LEAN,
        {
            "AbstractConnection.send_packed_command": "baaeabd916209157",
            "AbstractConnection.pack_command": "9a0e503fdcf56314",
        },
    ),
)
PIECES: Final = [(upstream, piece) for upstream in PINNED for piece in upstream.pieces]

PYPROJECT: Final = Path(__file__).parents[3] / "pyproject.toml"
PINS: Final = {"uvicorn": "0.54", "litestar": "2.25", "redis": "8.1"}
"""The minor versions the fingerprints were taken from (pyproject.toml pins the same)."""

PRIVATE_IMPORTS: Final = {
    "http/cors.py": {"litestar.middleware._internal.cors"},
    "infra/pipelined.py": {"redis._parsers.base"},
}
"""Every import of a dependency's private module in the service, by file: each is fingerprinted in PINNED."""


def _source(module: str, qualified: str) -> str:
    found: object = importlib.import_module(module)
    for name in filter(None, qualified.split(".")):
        found = inspect.getattr_static(found, name)
    if isinstance(found, classmethod | staticmethod):
        found = found.__func__
    return inspect.getsource(found)  # type: ignore[arg-type]


@pytest.mark.parametrize(("upstream", "piece"), PIECES, ids=[f"{u.module}:{p}" for u, p in PIECES])
def test_upstream_unchanged(upstream: Upstream, piece: str) -> None:
    """The upstream piece is the one our code was written against."""
    package = upstream.module.split(".")[0]
    actual = hashlib.sha256(_source(upstream.module, piece).encode()).hexdigest()[:16]
    assert actual == upstream.pieces[piece], (
        f"{upstream.module}:{piece} changed upstream ({package} {importlib.metadata.version(package)}; checked with "
        f"{PINS[package]}.*). Re-check service/pyramide/service/{upstream.ours} against the new upstream, re-copy "
        f"what it copies, run its tests, then set this piece's hash to {actual} in {Path(__file__).name}"
    )


@pytest.mark.parametrize("package", sorted(PINS))
def test_pinned_minor(package: str) -> None:
    """pyproject.toml keeps the package to the minor version the fingerprints were taken from, and that is the one
    installed (a patch release may still change a fingerprint: then this file's other test says what to re-check)."""
    dependencies = tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))["project"]["dependencies"]
    (pin,) = [r.specifier for r in map(Requirement, dependencies) if r.name == package]
    major, minor = map(int, PINS[package].split("."))
    assert f"{major}.{minor}.0" in pin and f"{major}.{minor + 1}.0" not in pin, (
        f"pyproject.toml lets {package} leave {PINS[package]}.* ({pin}), whose private code the service uses: "
        "pin it there, or re-check every entry of PINNED for it and update PINS"
    )
    version = importlib.metadata.version(package)
    assert version.startswith(PINS[package] + "."), f"{package} {version} is installed, not {PINS[package]}.*"


def _private(part: str) -> bool:
    return part.startswith("_") and not part.endswith("__")  # __future__ is no one's private module


def test_no_other_private_import() -> None:
    """No module of the service imports another dependency's private module unnoticed (a dotted part that starts
    with an underscore): a new one needs its pin, its entries in PINNED and its line in PRIVATE_IMPORTS."""
    service = Path(pyramide.service.__file__).parent
    found: dict[str, set[str]] = {}
    for path in sorted(service.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = (
                [node.module or ""]
                if isinstance(node, ast.ImportFrom) and node.level == 0
                else [alias.name for alias in node.names]
                if isinstance(node, ast.Import)
                else []
            )
            for name in names:
                if not name.startswith("pyramide") and any(_private(part) for part in name.split(".")):
                    found.setdefault(path.relative_to(service).as_posix(), set()).add(name)
    assert found == PRIVATE_IMPORTS


def test_process_pool_broken_flag() -> None:
    """``deals.analysis._broken`` reads the standard library's ``ProcessPoolExecutor._broken`` (Python offers no
    public way to ask whether a worker died): the pool still refuses work by that flag."""
    assert "self._broken" in inspect.getsource(ProcessPoolExecutor.submit), (
        "ProcessPoolExecutor no longer keeps _broken: re-check service/pyramide/service/deals/analysis.py (_broken)"
    )


def test_resource_tracker_stop() -> None:
    """``lifecycle.end_resource_tracker`` calls the standard library's ``ResourceTracker._stop`` (Python offers no
    public way to end the tracker before the process exits): it still closes the tracker's pipe and waits for it."""
    source = inspect.getsource(resource_tracker.ResourceTracker._stop)  # type: ignore[attr-defined]
    assert "os.close(self._fd)" in source and "os.waitpid(self._pid, 0)" in source, (
        "ResourceTracker._stop changed: re-check service/pyramide/service/infra/lifecycle.py (end_resource_tracker)"
    )
