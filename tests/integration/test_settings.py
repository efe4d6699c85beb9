"""`pyramide serve` refuses every bad setting at start, as an operator meets it: exit 2 and one line naming the
environment variable, never a traceback, never a server that starts on a value it cannot honour."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.integration.test_robustness import _free_port

BAD = {
    "memory limit": ({"PYRAMIDE_REDIS_MAXMEMORY": "lots"}, "PYRAMIDE_REDIS_MAXMEMORY"),
    "Redis URL": ({"REDIS_URL": "notaurl"}, "REDIS_URL"),
    "Redis URL port": ({"REDIS_URL": "redis://:hunter2@localhost:port/0"}, "REDIS_URL"),
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
}


def test_a_bad_setting_stops_serve_with_one_line_naming_its_variable(tmp_path: Path) -> None:
    """Every case at once (each is a whole start of the command): exit 2, one line on stderr naming the variable,
    the value unless it may be a secret, and nothing started."""
    serve = [sys.executable, "-m", "pyramide", "serve", "--port"]
    running = {
        case: subprocess.Popen(
            [*serve, str(_free_port()), "--data-dir", str(tmp_path / case)],
            env={**os.environ, **env},
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for case, (env, _) in BAD.items()
    }
    wrong = {}
    for case, process in running.items():
        try:
            _, stderr = process.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            process.kill()
            _, stderr = process.communicate()
        lines = stderr.splitlines()
        expected = f"pyramide serve: invalid setting: {BAD[case][1]}:"
        if process.returncode != 2 or len(lines) != 1 or not lines[0].startswith(expected) or "hunter2" in stderr:
            wrong[case] = (process.returncode, stderr[-300:])
        elif (tmp_path / case).exists():
            wrong[case] = (process.returncode, "the embedded Redis was started before the refusal")
    assert not wrong, wrong
