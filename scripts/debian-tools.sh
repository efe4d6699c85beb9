#!/usr/bin/env bash
# Sourced by scripts/test: the programs from Debian's packages that tests drive for real (buildah, podman and
# debootstrap for the container test, Chromium for the browser tests, HAProxy for the rolling-restart test),
# installed by one apt-get where they are missing and this is a Debian machine run as root. Elsewhere it says what is
# missing; the tests that need them then fail saying so, never skip.
missing=()
for tool in buildah podman debootstrap; do
    command -v "$tool" >/dev/null 2>&1 || missing+=("$tool")
done
command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 || missing+=(chromium)
command -v haproxy >/dev/null 2>&1 || [ -x /usr/sbin/haproxy ] || missing+=(haproxy)
if [ "${#missing[@]}" -gt 0 ]; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
        echo "== installing ${missing[*]} (Debian packages) for the container, browser and rolling-restart tests"
        { apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null; } \
            || echo "!! installing ${missing[*]} failed: the tests that need them will say what is missing" >&2
    else
        echo "!! the container, browser and rolling-restart tests need ${missing[*]}: install them" \
            "(Debian: apt-get install ${missing[*]}) as root" >&2
    fi
fi
