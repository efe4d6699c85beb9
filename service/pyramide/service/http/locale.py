"""The language of a response: ``Accept-Language`` negotiated by Babel against the catalogue's locales, else the
player's own setting, else Hungarian."""

from __future__ import annotations

from functools import lru_cache
from typing import Final

from babel import Locale as BabelLocale
from litestar import Request

from pyramide.engine.messages import DEFAULT_LOCALE, LOCALES, Locale

HEADER_CACHE_SIZE: Final = 256
"""Distinct ``Accept-Language`` values whose answer is kept: browsers send a handful, so nearly every request
(the move route's included) is one dictionary look-up; a client sending ever new values only evicts old ones."""


def negotiate_locale(header: str | None, fallback: Locale = DEFAULT_LOCALE) -> Locale:
    """The best of the catalogue's locales for an ``Accept-Language`` header (q-values honoured), else
    ``fallback``."""
    return (header and _negotiated(header)) or fallback


@lru_cache(maxsize=HEADER_CACHE_SIZE)
def _negotiated(header: str) -> Locale | None:
    """The one per-header-value cache of negotiation: Babel picks the first range, by quality then order, that
    names a locale of the catalogue (``hu-HU`` is ``hu``); a range of quality 0 is refused."""
    found = BabelLocale.negotiate(_ranked(header), LOCALES, sep="-")
    return None if found is None else "en" if found.language == "en" else "hu"


def _ranked(header: str) -> list[str]:
    """The header's language ranges, best quality first, in the header's order among equals."""
    ranges: list[tuple[float, int, str]] = []
    for index, part in enumerate(header.split(",")):
        tag, _, params = part.partition(";")
        quality = 1.0
        for param in params.split(";"):
            name, _, value = param.strip().partition("=")
            if name == "q":
                try:
                    quality = float(value)
                except ValueError:
                    quality = 0.0
        if quality > 0:
            ranges.append((-quality, index, tag.strip()))
    return [tag for *_, tag in sorted(ranges)]


def locale_for(request: Request) -> Locale:  # type: ignore[type-arg]
    """The language of a response: ``Accept-Language``, else the authenticated player's setting, else Hungarian."""
    player = request.scope.get("user")
    preferred: Locale = "en" if getattr(player, "locale", "hu") == "en" else "hu"
    return negotiate_locale(request.headers.get("accept-language"), preferred)
