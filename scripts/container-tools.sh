#!/usr/bin/env bash
# Sourced by scripts/test: the tools the container test builds and runs the image with (buildah, podman for
# `podman import`, debootstrap for the Debian base), installed from Debian's packages where they are missing and
# this is a Debian machine run as root. Elsewhere it says what is missing; the container test then fails saying so.
missing=()
for tool in buildah podman debootstrap; do
    command -v "$tool" >/dev/null 2>&1 || missing+=("$tool")
done
if [ "${#missing[@]}" -gt 0 ]; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
        echo "== installing ${missing[*]} (Debian packages) for the container test"
        { apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null; } \
            || echo "!! installing ${missing[*]} failed: the container test will say what is missing" >&2
    else
        echo "!! the container test needs ${missing[*]}: install them (Debian: apt-get install ${missing[*]}) as root" >&2
    fi
fi
