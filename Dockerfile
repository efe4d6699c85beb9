# syntax=docker/dockerfile:1
# The game service. Build: docker build -t pyramide . ; run with a Redis: docker compose up (see README).

FROM python:3.11-slim AS build
ENV UV_PYTHON_DOWNLOADS=never \
    UV_COMPILE_BYTECODE=1 \
    UV_LINK_MODE=copy \
    PIP_NO_CACHE_DIR=1
RUN pip install --no-cache-dir uv==0.13.8
WORKDIR /app
COPY pyproject.toml uv.lock README.md ./
RUN uv sync --locked --no-dev --no-install-project
COPY service ./service
RUN uv sync --locked --no-dev --no-editable

FROM python:3.11-slim
RUN useradd --create-home --uid 10001 pyramide \
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
