"""Full storage, played for real: a Redis at its ``maxmemory`` and a data directory on a full file system. Every
request that would write answers 507 ``storage_full`` (or 503 with ``Retry-After``), never 500; reads go on; and
once room comes back the service writes again by itself, with every acknowledged move still there."""

from __future__ import annotations

import signal
import subprocess
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

import httpx
import psutil
import redis
from litestar.testing import TestClient

from pyramide.service.infra.disk import CHECK_INTERVAL_S
from tests.support.audit import _as, _bearer, _me
from tests.support.challenges import held_challenge_win
from tests.support.operators import OPERATOR, OPERATOR_KEY
from tests.support.players import new_player
from tests.support.redis_commands import client_commands
from tests.support.serving import serving
from tests.support.waiting import eventually

Client = TestClient[Any]
REFUSED = {507, 503}
EN = {"Accept-Language": "en"}
REDIS_FILLS = {"PYRAMIDE_DISK_RESERVE_MB": "0"}
"""No disk reserve: the service's writes go on until the disk itself is full (as when another program fills it)."""
FREEING = {"reset stats"}
"""Deletions: Redis takes them past ``maxmemory`` (they free memory). Erasure is sent last, and must succeed."""


def _writes(client: httpx.Client, auth: dict[str, str], fresh: str, played: str, erase: bool = True) -> dict[str, Any]:
    """Every route that writes, each sent once (the player's erasure last, if ``erase``): its response by name."""
    key = {"Idempotency-Key": str(uuid.uuid4())}
    return {
        "create player": client.post("/v1/players", json={}, headers={**key}),
        "create game": client.post("/v1/games", json={"code": "PY1-N-AAAAAAS"}, headers=auth),
        "first move": client.post(f"/v1/games/{fresh}/moves", json={"type": "draw"}, headers=auth),
        "move": client.post(f"/v1/games/{played}/moves", json={"type": "draw"}, headers=auth),
        "undo": client.post(f"/v1/games/{played}/moves", json={"type": "undo"}, headers=auth),
        "tap": client.post(f"/v1/games/{played}/taps", json={"target": "stock"}, headers=auth),
        "hint": client.get(f"/v1/games/{played}/hint", headers=auth),
        "abandon": client.post(f"/v1/games/{fresh}/abandon", headers=auth),
        "settings": client.patch("/v1/players/me", json={"explain_errors": True}, headers=auth),
        "rename": client.patch("/v1/players/me", json={"name": "Teli Tár"}, headers=auth),
        "token rotation": client.post("/v1/players/me/token", headers={**auth, **key}),
        "reset stats": client.delete("/v1/players/me/stats", headers=auth),
        **({"erase": client.delete("/v1/players/me", headers=auth)} if erase else {}),
    }


def _reads(client: Client, auth: dict[str, str], played: str) -> dict[str, Any]:
    return {
        "game": client.get(f"/v1/games/{played}", headers=auth),
        "record": client.get(f"/v1/games/{played}/record", headers=auth),
        "me": client.get("/v1/players/me", headers=auth),
        "stats": client.get("/v1/players/me/stats", headers=auth),
        "wins": client.get("/v1/players/me/wins", headers=auth),
        "my games": client.get("/v1/players/me/games", headers=auth),
        "export": client.get("/v1/players/me/export", headers=auth),
        "leaderboard": client.get("/v1/leaderboards/PY1-N-AAAAAAS"),
        "deal": client.get("/v1/deals/PY1-N-AAAAAAS"),
        "live": client.get("/health/live"),
    }


def test_a_full_redis_refuses_every_write_with_507_never_500(client: Client, redis_client: redis.Redis) -> None:
    auth = new_player(client)
    fresh = client.post("/v1/games", json={"code": "PY1-N-AAAAAAS"}, headers=auth).json()["id"]
    played = client.post("/v1/games", json={"code": "PY1-N-AAAAAAS"}, headers=auth).json()["id"]
    assert client.post(f"/v1/games/{played}/moves", json={"type": "draw"}, headers=auth).status_code == 200
    redis_client.config_set("maxmemory", "1")
    try:
        writes = _writes(client, auth, fresh, played, erase=False)
        reads = _reads(client, auth, played)
        erased = client.delete("/v1/players/me", headers=auth)  # last: it works while full
    finally:
        redis_client.config_set("maxmemory", "0")
    assert erased.status_code == 204, erased.text
    assert client.get("/v1/players/me", headers=auth).status_code == 401
    for name, response in writes.items():
        if name in FREEING and response.status_code in (200, 204):
            continue  # a deletion frees memory: a full Redis may take it
        assert response.status_code in REFUSED, (name, response.status_code, response.text)
        assert response.headers["content-type"] == "application/problem+json", name
        assert response.json()["code"] in ("storage_full", "storage_unconfirmed"), name
    for name, response in reads.items():
        assert response.status_code == 200, (name, response.status_code, response.text)


# -- a full disk -----------------------------------------------------------------------------------------------


@contextmanager
def small_disk(where: Path, size: str = "3m") -> Iterator[Path]:
    """A real tmpfs of ``size`` mounted at ``where`` (the tests run as root), unmounted whatever happens."""
    where.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)], check=True)
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False)


def fill(disk: Path, leave: int) -> Path:
    """A filler file that takes all the room on ``disk`` but ``leave`` bytes (page-sized writes until ENOSPC, then
    the last ``leave`` bytes given back)."""
    filler = disk / "filler"
    page = b"\0" * 4096
    with filler.open("wb", buffering=0) as out:
        with suppress(OSError):
            for _ in range(10_000):
                out.write(page)
        out.truncate(max(0, out.tell() - leave))
    return filler


def _redis_child(served: Any) -> psutil.Process:
    """The embedded Redis by the process tree (its pid file may be stale: a full disk refuses to rewrite it)."""

    def running() -> psutil.Process | None:
        for child in psutil.Process(served.process.pid).children(recursive=True):
            with suppress(psutil.NoSuchProcess):
                if "redis-server" in child.name() and child.status() != psutil.STATUS_ZOMBIE:
                    return child
        return None

    found = eventually(running, 10, what="a running redis-server under `pyramide serve`")
    assert found is not None
    return found


def _move(http: httpx.Client, auth: dict[str, str], game: str, kind: str) -> httpx.Response:
    return http.post(f"/v1/games/{game}/moves", json={"type": kind}, headers=auth)


def _is_refusal(response: httpx.Response) -> bool:
    """A write refused as the service promises: 507 or 503 (with Retry-After), problem+json with a code."""
    assert response.status_code in (200, *REFUSED), (response.status_code, response.text)
    if response.status_code == 200:
        return False
    assert response.headers["content-type"] == "application/problem+json"
    assert response.json()["code"] in ("storage_full", "storage_unconfirmed", "service_unavailable")
    assert response.status_code == 507 or "retry-after" in response.headers
    return True


def test_a_full_disk_refuses_writes_keeps_reads_and_loses_no_acknowledged_move(tmp_path: Path) -> None:
    env = {"PYRAMIDE_LIMIT_MOVES": "0", "PYRAMIDE_LIMIT_GAMES": "0", "PYRAMIDE_SOLVER_WORKERS": "1", **REDIS_FILLS}
    with small_disk(tmp_path / "disk") as disk:
        data = disk / "data"
        acknowledged: dict[str, int] = {}
        with serving(data, tmp_path, env=env) as served, httpx.Client(base_url=served.url, timeout=10) as http:
            token = http.post("/v1/players", json={}).json()["token"]
            auth = {"Authorization": f"Bearer {token}"}
            games = [http.post("/v1/games", json={"code": "PY1-N-AAAAAAS"}, headers=auth).json()["id"] for _ in "ab"]
            fresh = http.post("/v1/games", json={"code": "PY1-N-AAAAAAS"}, headers=auth).json()["id"]
            swept = http.post("/v1/games", json={"code": "PY1-N-AAAAAAS"}, headers=auth).json()["id"]
            assert _move(http, auth, swept, "draw").status_code == 200  # something to undo in the sweep below
            filler = fill(disk, leave=48 * 1024)
            refused, current = 0, dict.fromkeys(games, 0)
            for step in range(2000):  # draw, undo, draw, ...: every one a change, until the disk refuses them
                game = games[step % 2]
                response = _move(http, auth, game, "undo" if current[game] % 2 else "draw")
                if _is_refusal(response):
                    refused += 1
                    read = http.get(f"/v1/games/{game}", headers=auth)  # a refused change may still be in memory
                    assert read.status_code == 200, read.text
                    current[game] = read.json()["version"]
                    if refused >= 6:
                        break
                else:
                    acknowledged[game] = current[game] = response.json()["version"]
            assert refused >= 6, "the disk never filled"
            for game in games:
                read = http.get(f"/v1/games/{game}", headers=auth)
                assert read.status_code == 200 and read.json()["version"] >= acknowledged.get(game, 0)
            assert _is_refusal(http.post("/v1/games", json={"code": "PY1-N-AAAAAAS"}, headers=auth))
            english = http.post(f"/v1/games/{games[0]}/moves", json={"type": "draw"}, headers={**auth, **EN})
            assert english.status_code == 507 and english.headers["content-language"] == "en"
            assert english.json()["title"].startswith("The storage is full")
            assert http.get("/health/ready").status_code == 507, "ready says why: Redis cannot write its file"
            for name, refusal in _writes(http, auth, fresh, swept, erase=False).items():
                assert _is_refusal(refusal), name  # every route that writes, never a 500
            assert http.get("/health/live").status_code == 200

            first = _redis_child(served)
            first.kill()  # SIGKILL while the disk is full
            first.wait(timeout=5)
            assert _redis_child(served).pid != first.pid, "the supervisor brought Redis back on a full disk"
            assert _eventually(lambda: http.get(f"/v1/games/{games[0]}", headers=auth).status_code == 200)
            for game, version in acknowledged.items():  # what was in memory only is gone; what was answered is not
                assert http.get(f"/v1/games/{game}", headers=auth).json()["version"] >= version, game
            assert _is_refusal(_move(http, auth, games[0], "draw")), "the disk is still full"
            assert http.get("/health/live").status_code == 200

            filler.unlink()  # room again: writes succeed by themselves, no restart
            assert _eventually(lambda: _move(http, auth, games[0], "draw").status_code == 200)
            for game in games:
                again = _move(http, auth, game, "draw")
                assert again.status_code == 200, again.text
                acknowledged[game] = again.json()["version"]
            http.close()  # no idle connection for the shutdown to wait for
            served.process.send_signal(signal.SIGTERM)
            assert served.process.wait(timeout=20) == 0
        with serving(data, tmp_path, env=env) as served, httpx.Client(base_url=served.url, timeout=10) as http:
            for game, version in acknowledged.items():
                kept = http.get(f"/v1/games/{game}", headers=auth).json()
                assert kept["version"] == version, f"game {game}: acknowledged version {version}, kept {kept}"


def _disk_watch_runs(http: httpx.Client) -> int:
    """How many times the server's disk watch has looked at the disk (its readiness reports its jobs)."""
    jobs = http.get("/health/ready").json()["jobs"]
    return int(next(job["runs"] for job in jobs if job["name"] == "disk watch"))


def _eventually(check: Callable[[], bool], seconds: float = 10) -> bool:
    with suppress(AssertionError):
        return eventually(check, seconds)
    return False


def test_writes_are_confirmed_on_disk_only_while_it_runs_low(tmp_path: Path) -> None:
    """The confirming PING costs a round trip, so with ``PYRAMIDE_CONFIRM_WRITES=auto`` a move sends it only while
    the embedded Redis's disk has less than the reserve free: not with room to spare, from the moment the disk
    runs low, and no more once room is back."""
    env = {"PYRAMIDE_CONFIRM_WRITES_RESERVE_MB": "2", "PYRAMIDE_SOLVER_WORKERS": "1", **REDIS_FILLS}
    with small_disk(tmp_path / "disk", size="8m") as disk:
        data = disk / "data"
        with serving(data, tmp_path, env=env) as served, httpx.Client(base_url=served.url, timeout=10) as http:
            auth = {"Authorization": f"Bearer {http.post('/v1/players', json={}).json()['token']}"}
            game = http.post("/v1/games", json={"code": "PY1-N-AAAAAAS"}, headers=auth).json()["id"]

            def commands_of_a_move(kind: str) -> list[str]:
                seen = _disk_watch_runs(http)  # the watch has looked at the disk since it changed
                eventually(lambda: _disk_watch_runs(http) >= seen + 2, 30 * CHECK_INTERVAL_S, what="a disk check")
                with client_commands(f"unix://{data / 'redis.sock'}") as commands:
                    assert _move(http, auth, game, kind).status_code == 200
                return commands

            assert "PING" not in commands_of_a_move("draw"), "6 MB free, above the 2 MB reserve: no confirmation"
            filler = fill(disk, leave=1024 * 1024)
            assert "PING" in commands_of_a_move("undo"), "1 MB free: the move waits for Redis to confirm its file"
            filler.unlink()
            assert "PING" not in commands_of_a_move("draw"), "room again: no confirmation"


# -- moderation while full ------------------------------------------------------------------------------------


def _fill_memory(redis_at: redis.Redis, owner: str) -> int:
    """Fill Redis to its ``maxmemory`` with keys under the player ``owner``'s tag (its erasure deletes them): 4 KB
    values until Redis refuses one, then small ones until it refuses those too. How many were written. Called again
    before each request, as the service's own keys that expire (rate-limit cells) give some room back."""
    written = 0
    for size in (4096, 64, 8):
        with suppress(redis.exceptions.OutOfMemoryError):
            for _ in range(100_000):
                redis_at.set(f"pyr:{{p:{owner}}}:filler:{uuid.uuid4().hex}", b"f" * size)
                written += 1
    return written


def test_moderators_revoke_ban_annul_decide_and_erase_while_redis_is_full(tmp_path: Path) -> None:
    """Issue 57: with Redis at ``maxmemory`` (filled by one player's data, as a leaked key would fill it), ordinary
    writes, an app's moderation among them, are 507 while the operator's review decision, annulment, ban and unban,
    revoking the app, a player's own erasure and the operator's erasure all succeed, each audited; once the erasure
    of the filler frees its room, ordinary writes work again, and the reserve is kept again for the next one."""
    env = {"PYRAMIDE_REDIS_MAXMEMORY": "8mb", "PYRAMIDE_OPERATOR_KEY": OPERATOR_KEY, "PYRAMIDE_SOLVER_WORKERS": "1"}
    with (
        serving(tmp_path / "data", tmp_path, env=env) as served,
        httpx.Client(base_url=served.url, timeout=10) as http,
        redis.Redis(unix_socket_path=str(served.data_dir / "redis.sock")) as redis_at,
    ):
        eventually(lambda: redis_at.exists("pyr:memory-reserve"), 10, what="the memory reserve taken at start")
        app = http.post("/v1/admin/apps", json={"name": "Leak", "scopes": ["players", "moderation"]}, headers=OPERATOR)
        assert app.status_code == 201, app.text
        key = app.json()["key"]
        bot = _me(http, _as(key, "bot"))
        ranked, held = (held_challenge_win(http, redis_at, _player(http), OPERATOR) for _ in range(2))
        accepted = http.post(f"/v1/admin/reviews/{ranked['id']}/accept", json={"reason": "ok"}, headers=OPERATOR)
        assert accepted.status_code == 200, accepted.text
        banned, cheat, gone = (_me(http, _player(http)) for _ in range(3))
        assert http.post(f"/v1/admin/players/{banned}/ban", json={"reason": "x"}, headers=OPERATOR).status_code == 200
        leaver, filler = _player(http), _me(http, _player(http))
        assert _fill_memory(redis_at, filler) > 1000

        def full(method: str, url: str, **options: Any) -> httpx.Response:
            _fill_memory(redis_at, filler)
            return http.request(method, url, **options)

        why = {"reason": "issue 57"}
        ordinary = {
            "create player": full("POST", "/v1/players", json={}),
            "an app's ban": full("POST", f"/v1/admin/players/{bot}/ban", json=why, headers=_bearer(key)),
            "create game": full("POST", "/v1/games", json={"code": "PY1-N-AAAAAAS"}, headers=leaver),
            "rename": full("PATCH", "/v1/players/me", json={"name": "Más"}, headers=leaver),
        }
        entry = f"/v1/admin/leaderboards/challenge:{ranked['challenge']}/entries/{ranked['player']}"
        moderated = {
            "acceptReview": full("POST", f"/v1/admin/reviews/{held['id']}/accept", json=why, headers=OPERATOR),
            "annulLeaderboardEntry": full("DELETE", entry, params=why, headers=OPERATOR),
            "banPlayer": full("POST", f"/v1/admin/players/{cheat}/ban", json=why, headers=OPERATOR),
            "unbanPlayer": full("POST", f"/v1/admin/players/{banned}/unban", json=why, headers=OPERATOR),
            "revokeApp": full("DELETE", f"/v1/admin/apps/{app.json()['id']}", headers=OPERATOR),
            "erasePlayer": full("DELETE", "/v1/players/me", headers=leaver),
            "erasePlayerByOperator": full("DELETE", f"/v1/admin/players/{gone}", params=why, headers=OPERATOR),
        }
        still_full = full("POST", "/v1/players", json={})
        freed = http.delete(f"/v1/admin/players/{filler}", params=why, headers=OPERATOR)
        after = http.post("/v1/players", json={})
        audited = [e["action"] for e in http.get("/v1/admin/audit", headers=OPERATOR).json()["entries"]]
        reserve_kept = redis_at.exists("pyr:memory-reserve")

    assert {name: r.status_code for name, r in ordinary.items()} == dict.fromkeys(ordinary, 507)
    assert all(r.json()["code"] == "storage_full" for r in ordinary.values())
    assert {name: r.status_code for name, r in moderated.items()} == {
        "acceptReview": 200,
        "annulLeaderboardEntry": 204,
        "banPlayer": 200,
        "unbanPlayer": 200,
        "revokeApp": 204,
        "erasePlayer": 204,
        "erasePlayerByOperator": 204,
    }, {name: r.text[:120] for name, r in moderated.items()}
    assert audited[:7] == ["erase", "erase", "revoke_app", "unban", "ban", "annul", "accept_review"], audited
    assert still_full.status_code == 507, "moderation wrote within its reserve, not in the room of ordinary writes"
    assert freed.status_code == 204, freed.text
    assert after.status_code == 201, f"the erasure freed the room, yet: {after.text}"
    assert reserve_kept, "the reserve is taken again for the next moderator"


def _player(http: httpx.Client) -> dict[str, str]:
    response = http.post("/v1/players", json={})
    assert response.status_code == 201, response.text
    return {"Authorization": f"Bearer {response.json()['token']}"}


def test_on_a_short_or_full_disk_only_moderation_and_erasure_write(tmp_path: Path) -> None:
    """Issue 57: moves fill the disk until the service refuses them (below ``PYRAMIDE_DISK_RESERVE_MB`` free, before
    Redis's file has no room: Redis would then refuse every write, deletions included), while a player's erasure
    still succeeds. Then something else fills the disk to the last byte: the service gives its ballast file back, so
    a ban and another erasure still succeed, audited; once room is back, ordinary writes work again."""
    env = {
        "PYRAMIDE_DISK_RESERVE_MB": "2",
        "PYRAMIDE_OPERATOR_KEY": OPERATOR_KEY,
        "PYRAMIDE_LIMIT_MOVES": "0",
        "PYRAMIDE_SOLVER_WORKERS": "1",
    }
    with (
        small_disk(tmp_path / "disk", size="8m") as disk,
        serving(disk / "data", tmp_path, env=env) as served,
        httpx.Client(base_url=served.url, timeout=10) as http,
    ):
        player, leaver, other, cheat = _player(http), _player(http), _player(http), _me(http, _player(http))
        game = http.post("/v1/games", json={"code": "PY1-N-AAAAAAS"}, headers=player).json()["id"]
        assert (disk / "data" / "disk-reserve").stat().st_size == 1024 * 1024, "the ballast: half the reserve"
        filler = fill(disk, leave=2 * 1024 * 1024 + 256 * 1024)
        refused = None
        for step in range(5000):  # draw, undo, draw, ...: each a change, until the service refuses one
            response = _move(http, player, game, "undo" if step % 2 else "draw")
            if response.status_code != 200:
                refused = response
                break
        assert refused is not None, "the disk never ran short"
        short = {
            "move": refused,
            "createPlayer": http.post("/v1/players", json={}),
            "erasePlayer": http.delete("/v1/players/me", headers=leaver),
        }
        fill(disk, leave=0)  # another program takes the rest
        ballast = disk / "data" / "disk-reserve"
        assert _eventually(lambda: not ballast.exists()), "the ballast is given back on a full disk"
        assert _eventually(lambda: http.get("/health/ready").status_code == 200), "Redis writes its file again"
        full = {
            "banPlayer": http.post(f"/v1/admin/players/{cheat}/ban", json={"reason": "bot"}, headers=OPERATOR),
            "erasePlayer": http.delete("/v1/players/me", headers=other),
            "createPlayer": http.post("/v1/players", json={}),
        }
        audited = [e["action"] for e in http.get("/v1/admin/audit", headers=OPERATOR).json()["entries"]]
        filler.unlink()
        assert _eventually(lambda: http.post("/v1/players", json={}).status_code == 201), "room is back"

    def seen_as(answers: dict[str, httpx.Response]) -> dict[str, tuple[int, Any]]:
        return {name: (r.status_code, r.text and r.json().get("code")) for name, r in answers.items()}

    assert seen_as(short) == {
        "move": (507, "storage_full"),
        "createPlayer": (507, "storage_full"),
        "erasePlayer": (204, ""),
    }
    assert seen_as(full) == {"banPlayer": (200, None), "erasePlayer": (204, ""), "createPlayer": (507, "storage_full")}
    assert audited[0] == "ban", audited
