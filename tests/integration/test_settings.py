"""`pyramide serve` refuses every bad setting at start, as an operator meets it: exit 2 and one line naming the
environment variable, never a traceback, never a server that starts on a value it cannot honour."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import typing
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import Encoding, NoEncryption, PrivateFormat
from pydantic.fields import FieldInfo

from pyramide.service.infra.settings import setting_fields, unknown_variables
from pyramide.service.infra.settings.environment import NOT_SETTINGS
from tests.support.serving import ROOT, _free_port

PUBLIC_ONLY = '[{"kty": "OKP", "crv": "Ed25519", "x": "hunter2hunter2hunter2hunter2hunter2hunter2hun"}]'
"""A public key alone (a made-up one): it cannot sign, so it may not come first."""

BAD = {
    "memory limit": ({"PYRAMIDE_REDIS_MAXMEMORY": "lots"}, "PYRAMIDE_REDIS_MAXMEMORY"),
    "Redis URL": ({"REDIS_URL": "notaurl"}, "REDIS_URL"),
    "Redis URL port": ({"REDIS_URL": "redis://:hunter2@localhost:port/0"}, "REDIS_URL"),
    "Sentinel URL without the master's name": ({"REDIS_URL": "redis+sentinel://:hunter2@127.0.0.1:26379"}, "REDIS_URL"),
    "no workers": ({"PYRAMIDE_WORKERS": "0"}, "PYRAMIDE_WORKERS"),
    "negative workers": ({"PYRAMIDE_WORKERS": "-3"}, "PYRAMIDE_WORKERS"),
    "origin without scheme": ({"PYRAMIDE_CORS_ORIGINS": "app.example"}, "PYRAMIDE_CORS_ORIGINS"),
    "origin with a path": ({"PYRAMIDE_CORS_ORIGINS": "https://app.example/play"}, "PYRAMIDE_CORS_ORIGINS"),
    "proxy header": (
        {"PYRAMIDE_TRUSTED_PROXY_HEADER": "X Forwarded For", "PYRAMIDE_TRUSTED_PROXIES": "10.0.0.0/8"},
        "PYRAMIDE_TRUSTED_PROXY_HEADER",
    ),
    "rate limit": ({"PYRAMIDE_LIMIT_MOVES": "many"}, "PYRAMIDE_LIMIT_MOVES"),
    "connection limit": ({"PYRAMIDE_MAX_CONNECTIONS": "lots"}, "PYRAMIDE_MAX_CONNECTIONS"),
    "no redis-server there": ({"PYRAMIDE_REDIS_SERVER": "/nonexistent/redis-server"}, "PYRAMIDE_REDIS_SERVER"),
    "streams taking every connection": (
        {"PYRAMIDE_MAX_CONNECTIONS": "64", "PYRAMIDE_MAX_STREAMS": "64"},
        "PYRAMIDE_MAX_STREAMS",
    ),
    "signing key not a key": ({"PYRAMIDE_SIGNING_KEYS": "hunter2"}, "PYRAMIDE_SIGNING_KEYS"),
    "signing key that cannot sign": ({"PYRAMIDE_SIGNING_KEYS": PUBLIC_ONLY}, "PYRAMIDE_SIGNING_KEYS"),
}


@pytest.mark.slow
def test_a_bad_setting_stops_serve_with_one_line_naming_its_variable(tmp_path: Path) -> None:
    """Every case (each a whole start of the command, two at a time, so that a loaded machine starves none of them
    past its minute): exit 2, one line on stderr naming the variable, the value unless it may be a secret, and
    nothing started."""

    def start(case: str) -> tuple[int, str]:
        serve = [sys.executable, "-m", "pyramide", "serve", "--port", str(_free_port())]
        command = [*serve, "--data-dir", str(tmp_path / case)]
        env = {**os.environ, **BAD[case][0]}
        try:
            done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=60)
        except subprocess.TimeoutExpired as error:  # its output comes as bytes, whatever `text` says
            output = error.stderr or b""
            return -9, output.decode(errors="replace") if isinstance(output, bytes) else output
        return done.returncode, done.stderr

    with ThreadPoolExecutor(max_workers=2) as pool:  # the CI machine's cores, whatever the host reports
        ended = dict(zip(BAD, pool.map(start, BAD), strict=True))
    wrong = {}
    for case, (returncode, stderr) in ended.items():
        lines = stderr.splitlines()
        expected = f"pyramide serve: invalid setting: {BAD[case][1]}:"
        if returncode != 2 or len(lines) != 1 or not lines[0].startswith(expected) or "hunter2" in stderr:
            wrong[case] = (returncode, stderr[-300:])
        elif (tmp_path / case).exists():
            wrong[case] = (returncode, "the embedded Redis was started before the refusal")
    assert not wrong, wrong


@pytest.mark.slow
def test_a_bad_secret_file_stops_serve_with_one_line_naming_its_variable(tmp_path: Path) -> None:
    """A ``*_FILE`` variable naming a file that cannot be read, that holds what its variable would be refused with,
    or set beside its variable: exit 2, one line naming the ``*_FILE`` variable and never the file's text, nothing
    started (two starts at a time, as above)."""
    files = tmp_path / "secrets"
    files.mkdir()
    (files / "not-a-key").write_text("hunter2\n")
    (files / "public-only").write_text(PUBLIC_ONLY)
    (files / "short").write_text("hunter2\n")
    (files / "binary").write_bytes(b"\xffhunter2")
    (files / "key").write_text(
        Ed25519PrivateKey.generate().private_bytes(Encoding.PEM, PrivateFormat.PKCS8, NoEncryption()).decode()
    )
    cases = {
        "key file not a key": ({"PYRAMIDE_SIGNING_KEYS_FILE": "not-a-key"}, "PYRAMIDE_SIGNING_KEYS_FILE"),
        "key file that cannot sign": ({"PYRAMIDE_SIGNING_KEYS_FILE": "public-only"}, "PYRAMIDE_SIGNING_KEYS_FILE"),
        "no key file": ({"PYRAMIDE_SIGNING_KEYS_FILE": "missing"}, "PYRAMIDE_SIGNING_KEYS_FILE"),
        "key file and variable": (
            {"PYRAMIDE_SIGNING_KEYS_FILE": "key", "PYRAMIDE_SIGNING_KEYS": PUBLIC_ONLY},
            "PYRAMIDE_SIGNING_KEYS_FILE",
        ),
        "secret too short": ({"PYRAMIDE_DEAL_SECRET_FILE": "short"}, "PYRAMIDE_DEAL_SECRET_FILE"),
        "secret not text": ({"PYRAMIDE_DEAL_SECRET_FILE": "binary"}, "PYRAMIDE_DEAL_SECRET_FILE"),
        "operator key too short": ({"PYRAMIDE_OPERATOR_KEY_FILE": "short"}, "PYRAMIDE_OPERATOR_KEY_FILE"),
    }

    def start(case: str) -> tuple[int, str]:
        env = {**os.environ}
        for variable, value in cases[case][0].items():
            env[variable] = str(files / value) if variable.endswith("_FILE") else value
        serve = [sys.executable, "-m", "pyramide", "serve", "--port", str(_free_port())]
        command = [*serve, "--data-dir", str(tmp_path / case)]
        done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=60)
        return done.returncode, done.stderr

    with ThreadPoolExecutor(max_workers=2) as pool:
        ended = dict(zip(cases, pool.map(start, cases), strict=True))
    wrong = {}
    for case, (returncode, stderr) in ended.items():
        lines = stderr.splitlines()
        expected = f"pyramide serve: invalid setting: {cases[case][1]}:"
        if returncode != 2 or len(lines) != 1 or not lines[0].startswith(expected) or "hunter2" in stderr:
            wrong[case] = (returncode, stderr[-300:])
        elif (tmp_path / case).exists():
            wrong[case] = (returncode, "the embedded Redis was started before the refusal")
    assert not wrong, wrong


def _table_rows() -> dict[str, tuple[str, str]]:
    """``docs/operations.md``'s settings table: each variable's default cell and whole row; a row naming several
    (``PYRAMIDE_LIMIT_PLAYERS``, ``_ANALYSES``) gives each its own default from the comma-separated list."""
    text = (ROOT / "docs" / "operations.md").read_text(encoding="utf-8")
    table = text[text.index("## Settings") :]
    rows: dict[str, tuple[str, str]] = {}
    lines = table.splitlines()
    first = next(i for i, line in enumerate(lines) if line.startswith("| `"))
    for line in lines[first:]:
        if not line.startswith("| `"):
            break
        names_cell, default_cell, _ = (cell.strip() for cell in line.strip("|").split("|", 2))
        names = re.findall(r"`([A-Z_]+)`", names_cell)
        prefix = names[0].rsplit("_", 1)[0] if names[0].startswith("PYRAMIDE_LIMIT_") else "PYRAMIDE"
        names = [n if n.startswith(("PYRAMIDE_", "REDIS_")) else prefix + n for n in names]
        defaults = default_cell.split(", ") if len(names) > 1 else [default_cell]
        for name, default in zip(names, defaults, strict=False):
            rows[name] = (default, line)
    return rows


def _documented_default_matches(field: FieldInfo, cell: str) -> bool:
    """The default cell says the field's default: a number of the field's type, a value in backticks, or words
    for none (``none``, ``unset``, ``off``, a generated or computed value)."""
    default = field.default
    if field.default_factory is not None:
        return "cores" in cell
    if default is None or default == ():
        return cell.startswith(("none", "unset", "generated", "set by"))
    if isinstance(default, bool):
        return cell == ("on" if default else "off")
    if isinstance(default, int | float):
        number = re.match(r"`?(-?[0-9.]+)`?", cell)
        if number is None or ("." in number[1] and field.annotation is int):
            return False
        return float(number[1]) == float(default)
    shown = re.match(r"`([^`]*)`", cell)
    expected = ",".join(map(str, default)) if isinstance(default, tuple) else str(default)
    if isinstance(default, Path):
        return shown is not None and Path(shown[1]) == default
    return shown is not None and shown[1] == expected


def _constraints(field: FieldInfo) -> list[str]:
    """What the table must state of a field's bounds: its allowed values, and every lower bound but the obvious
    ones (0, 1, more than 0) as "at least N", every upper one as "at most N"."""
    said = [f"`{value}`" for value in typing.get_args(field.annotation) if isinstance(value, str)]
    for bound in field.metadata:
        floor = getattr(bound, "ge", None) or getattr(bound, "min_length", None)
        if floor is not None and floor > 1:
            said.append(f"at least {floor}")
        ceiling = getattr(bound, "max_length", None) or getattr(bound, "le", None)
        if ceiling is not None:
            said.append(f"at most {ceiling}")
    return said


def test_the_operations_table_states_every_settings_default_and_bounds() -> None:
    """Every setting of the model has a row in ``docs/operations.md`` under its variable, whose default is the
    model's (of its type) and which states its allowed values and bounds."""
    rows = _table_rows()
    wrong = []
    for var, (_, field) in setting_fields().items():
        if var not in rows:
            wrong.append(f"{var}: no row")
            continue
        default, line = rows[var]
        if not _documented_default_matches(field, default):
            wrong.append(f"{var}: default {default!r}, the model's {field.default!r}")
        wrong += [f"{var}: does not say {c!r}" for c in _constraints(field) if c not in line]
    assert not wrong, wrong


def test_an_unknown_pyramide_variable_stops_serve_naming_the_closest_setting(tmp_path: Path) -> None:
    """A misspelt variable would leave its setting at the default, silently: `pyramide serve` exits 2 with one line
    naming it and the setting it most likely meant, before starting anything."""
    command = [sys.executable, "-m", "pyramide", "serve", "--port", str(_free_port()), "--data-dir", str(tmp_path)]
    env = {**os.environ, "PYRAMIDE_LIMT_MOVES": "5"}
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2, done.stderr[-300:]
    assert done.stderr.splitlines() == [
        "pyramide serve: unknown setting: PYRAMIDE_LIMT_MOVES: no such setting (did you mean PYRAMIDE_LIMIT_MOVES?)"
    ]
    assert not any(tmp_path.iterdir()), "the embedded Redis was started before the refusal"


def test_every_pyramide_variable_the_project_names_is_a_setting_or_a_known_tool_s() -> None:
    """Every ``PYRAMIDE_*`` variable named in the docs, scripts, tests, benchmarks, container files and Kubernetes
    manifests is one that `pyramide serve` knows (a setting, or one of the tools' it lets by), so none of them stops
    it."""
    sources = [ROOT / name for name in ("Dockerfile", "docker-compose.yml", "README.md", "CONTRIBUTING.md")]
    for folder in ("docs", "scripts", "tests", "benchmarks", "examples", "deploy"):
        sources += [
            p
            for p in (ROOT / folder).rglob("*")
            if p.is_file() and p.suffix in ("", ".md", ".py", ".sh", ".yml", ".yaml")
        ]
    named = {
        name
        for path in sources
        if path.exists()
        for name in re.findall(r"\bPYRAMIDE_[A-Z0-9_]*[A-Z0-9]\b", path.read_text(encoding="utf-8", errors="replace"))
    }
    named -= {"PYRAMIDE_LIMT_MOVES"}  # the misspelling the test above starts `pyramide serve` with
    assert named, "the search found the variables"
    assert unknown_variables(dict.fromkeys(named, "1")) == []
    assert named >= NOT_SETTINGS, "a tool's variable that nothing names any more"
