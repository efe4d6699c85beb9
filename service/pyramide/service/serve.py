"""Running the service: `pyramide serve` and `pyramide openapi`."""

from __future__ import annotations

import dataclasses
import logging
import signal
import sys
from pathlib import Path

import uvicorn

from pyramide.service.app import create_app
from pyramide.service.embedded_redis import EmbeddedRedis
from pyramide.service.http_server import server_config
from pyramide.service.openapi import COMMITTED, build_document, render
from pyramide.service.settings import Settings

log = logging.getLogger("pyramide.serve")


def serve(host: str, port: int, data_dir: str | None) -> int:
    """Serve on ``host:port``; start (and at the end stop) the embedded Redis when ``REDIS_URL`` is not set."""
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    settings = Settings.from_env()
    if data_dir is not None:
        settings = dataclasses.replace(settings, data_dir=Path(data_dir))
    embedded = None
    if settings.redis_url is None:
        # uvicorn stops on SIGTERM, then raises it again: with the default action the process would die there,
        # before stopping the embedded Redis (which `docker stop`, systemd or a supervisor's TERM would orphan).
        signal.signal(signal.SIGTERM, _exit_on_sigterm)
        embedded = EmbeddedRedis(settings.data_dir, maxmemory=settings.redis_maxmemory).start()
        log.info("embedded Redis at %s (data in %s)", embedded.url, embedded.data_dir)
        settings = dataclasses.replace(settings, redis_url=embedded.url)
    try:
        uvicorn.Server(server_config(create_app(settings), host, port, settings.header_timeout_s)).run()
    finally:
        if embedded is not None:
            embedded.stop()
    return 0


def _exit_on_sigterm(signum: int, frame: object) -> None:  # noqa: ARG001 - a signal handler's signature
    raise SystemExit(128 + signum)


def write_openapi(check: bool) -> int:
    """Regenerate ``openapi/openapi.json``; with ``check``, fail if it differs from the app's."""
    text = render(build_document(create_app(Settings(redis_url="redis://unused"))))
    if check:
        current = COMMITTED.read_text(encoding="utf-8") if COMMITTED.exists() else ""
        if current != text:
            print(f"{COMMITTED} is out of date: run `pyramide openapi`", file=sys.stderr)
            return 1
        return 0
    COMMITTED.write_text(text, encoding="utf-8")
    print(f"wrote {COMMITTED}")
    return 0
