"""The committed OpenAPI schema is the app's; the container files pass real linters."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import compose
from litestar.testing import TestClient

from pyramide.service.http.openapi import COMMITTED, render
from pyramide.service.infra.settings import HttpSettings
from pyramide.service.serve import stop_budget_s
from tests.support.schema_refs import resolved

ROOT = Path(__file__).resolve().parents[2]
OPERATIONS = {
    "createPlayer", "getCurrentPlayer", "updateCurrentPlayer", "createGame", "getGame", "playMove", "tap",
    "abandonGame", "getGameRecord", "getGamePosition", "getDeal", "listRules", "getLiveness", "getReadiness",
    "getHint", "analyseDeal", "getGameReview", "streamGame", "streamLeaderboard", "streamChallengeLeaderboard",
    "getPlayerStats", "resetPlayerStats", "listPlayerWins", "getLeaderboard", "listPlayerGames",
    "rotatePlayerToken", "exportPlayerData", "erasePlayer", "getCurrentChallenge", "getChallenge", "listChallenges",
    "getChallengeLeaderboard", "createApp", "listApps", "getApp", "getCurrentApp", "rotateAppKey", "revokeApp",
    "listAuditLog",
    "banPlayer", "unbanPlayer",
    "annulLeaderboardEntry", "erasePlayerByOperator", "createSession", "listReviews", "acceptReview", "rejectReview",
    "getGameCertificate", "getSigningKeys", "createWebhook", "listWebhooks", "getWebhook", "deleteWebhook",
    "rotateWebhookSecret", "listWebhookDeliveries", "redeliverWebhookEvent", "enableWebhook", "sendTestWebhook",
}  # fmt: skip


def test_the_committed_schema_is_the_running_apps(client: TestClient[Any]) -> None:
    served = client.get("/schema/openapi.json").json()
    assert render(served) == COMMITTED.read_text(encoding="utf-8"), "run `scripts/run openapi` to regenerate it"


def test_operations_have_readable_ids_and_document_their_errors(client: TestClient[Any]) -> None:
    document = resolved(client.get("/schema/openapi.json").json())
    operations = [op for path in document["paths"].values() for op in path.values()]
    assert {op["operationId"] for op in operations} == OPERATIONS
    for op in operations:
        needs_redis = op["operationId"] not in {"listRules", "getLiveness"}
        may_be_down = needs_redis or op["operationId"] == "getLiveness"  # 503: the embedded Redis is beyond repair
        assert ("503" in op["responses"]) == may_be_down, op["operationId"]
        assert ("507" in op["responses"]) == needs_redis, op["operationId"]
        for status, response in op["responses"].items():
            if int(status) >= 400:
                assert list(response["content"]) == ["application/problem+json"], (op["operationId"], status)


def test_constraints_reach_the_schema(client: TestClient[Any]) -> None:
    """Litestar drops some constraints; this schema comes from pydantic and keeps them."""
    schemas = resolved(client.get("/schema/openapi.json").json())["components"]["schemas"]
    assert schemas["PairMove"]["properties"]["cards"]["items"]["pattern"].startswith("^(10|")
    assert schemas["PairMove"]["additionalProperties"] is False
    assert len(schemas["LayoutBody"]["properties"]["pyramid"]["prefixItems"]) == 7
    assert schemas["RulesBody"]["properties"]["recycles"]["anyOf"][0]["maximum"] == 9
    document = resolved(client.get("/schema/openapi.json").json())
    for path in ("/v1/players/me/wins", "/v1/leaderboards/{code}", "/v1/challenges/{challenge_id}/leaderboard"):
        parameters = {p["name"]: p["schema"] for p in document["paths"][path]["get"]["parameters"]}
        assert parameters["limit"]["minimum"] == 1 and parameters["limit"]["maximum"] == 100
        assert parameters["cursor"]["pattern"].replace("(?:a:)?", "").startswith("^[0-9]{12}:")


def test_the_regenerate_command_checks_the_committed_file() -> None:
    done = subprocess.run([sys.executable, "-m", "pyramide", "openapi", "--check"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert json.loads(COMMITTED.read_text())["info"]["title"] == "Pyramide"


def test_the_dockerfile_passes_hadolint() -> None:
    hadolint = Path(sys.executable).parent / "hadolint"
    done = subprocess.run([str(hadolint), str(ROOT / "Dockerfile")], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    text = (ROOT / "Dockerfile").read_text()
    assert text.count("FROM ") >= 2 and "HEALTHCHECK" in text and "USER 10001" in text and "--locked" in text


def test_compose_is_valid_for_the_compose_v2_binary() -> None:
    """It parses, starts the api once Redis is healthy, and waits for the api's whole stop (drain, grace, background
    work: ``serve.stop_budget_s``) before it kills it."""
    binary = Path(compose.__file__).parent / "docker-compose"  # the binary itself: its wrapper always exits 0
    done = subprocess.run(
        [str(binary), "-f", str(ROOT / "docker-compose.yml"), "config", "--format", "json"],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    config = json.loads(done.stdout)
    redis, api = config["services"]["redis"], config["services"]["api"]
    assert "--appendonly" in redis["command"] and redis["healthcheck"]["test"]
    assert api["depends_on"]["redis"]["condition"] == "service_healthy"
    assert api["environment"]["REDIS_URL"].startswith("redis://redis:")
    assert api["build"]["target"] == "external-redis", "the image with a Redis server of its own"
    grace = re.fullmatch(r"([0-9]+)s", api["stop_grace_period"])
    assert grace and int(grace[1]) >= stop_budget_s(HttpSettings()), "Docker would SIGKILL the api mid-stop"
    broken = subprocess.run(
        [str(binary), "-f", "-", "config", "-q"], input="services:\n  api:\n    depends_on: [x]\n", text=True,
        capture_output=True,
    )  # fmt: skip
    assert broken.returncode != 0, "the binary does fail on a bad file"


def test_the_build_context_is_only_what_the_image_needs() -> None:
    ignored = {line.strip() for line in (ROOT / ".dockerignore").read_text().splitlines() if line.strip()[:1] != "#"}
    assert {".git", ".venv", ".tools", "data", "**/__pycache__", ".mypy_cache", ".pytest_cache"} <= ignored
    for needed in ("pyproject.toml", "uv.lock", "README.md", "LICENSE", "service"):
        assert needed not in ignored, f"the Dockerfile copies {needed}"


def test_readme_publishes_containers_on_loopback_and_the_image_uses_every_core() -> None:
    readme = (ROOT / "README.md").read_text()
    runs = [line for line in readme.splitlines() if "docker run" in line]
    assert runs and all("-p 127.0.0.1:" in line for line in runs)
    assert '"--workers", "auto"' in (ROOT / "Dockerfile").read_text()
    assert "PYRAMIDE_WORKERS: auto" in (ROOT / "docker-compose.yml").read_text()
    assert "maxmemory-policy" in (ROOT / "docker-compose.yml").read_text()
