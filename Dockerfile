# syntax=docker/dockerfile:1
# The game service on Debian bookworm-slim with Debian's Python 3.11.
# Build: docker build -t pyramide . ; run: see README (embedded Redis in /data) or docker compose up.

FROM debian:bookworm-slim AS build
# Compiled modules are stripped of their debug symbols (uvloop's alone: 13 MB); bytecode is written on first use.
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
COPY pyproject.toml uv.lock README.md ./
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

FROM debian:bookworm-slim
# hadolint ignore=DL3008
RUN apt-get update \
    && apt-get install -y --no-install-recommends python3 \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --create-home --uid 10001 pyramide \
    && mkdir /data \
    && chown pyramide:pyramide /data
WORKDIR /app
COPY --from=build --chown=pyramide:pyramide /app/.venv /app/.venv
ENV PATH="/app/.venv/bin:$PATH" \
    PYRAMIDE_DATA_DIR=/data \
    PYTHONUNBUFFERED=1
USER 10001:10001
EXPOSE 8000
HEALTHCHECK --interval=10s --timeout=3s --start-period=5s --retries=3 \
    CMD ["python", "-c", "import sys, urllib.request; sys.exit(urllib.request.urlopen('http://127.0.0.1:8000/health/ready', timeout=2).status != 200)"]
CMD ["pyramide", "serve", "--host", "0.0.0.0", "--port", "8000", "--workers", "auto"]
