#!/usr/bin/env bash
# Sourced by scripts/test: the headless Chromium the browser tests drive (Debian's package; Playwright's own browser
# download needs the internet), installed where it is missing and this is a Debian machine run as root. Elsewhere
# it says what is missing; the browser tests then fail saying so, never skip.
if ! command -v chromium >/dev/null 2>&1 && ! command -v chromium-browser >/dev/null 2>&1; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
        echo "== installing chromium (Debian package) for the browser tests"
        { apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; } \
            || echo "!! installing chromium failed: the browser tests will say what is missing" >&2
    else
        echo "!! the browser tests need Chromium: install it (Debian: apt-get install chromium) as root" >&2
    fi
fi
