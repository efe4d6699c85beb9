"""The message catalogue: every text a player reads, in Hungarian (the rules document's own strings where it quotes
one) and English, kept in one data file that the service and the web client both read: ``messages.json`` of the
web client (``web/`` at the top of the repository, ``pyramide/web`` in the wheel). It is read once, when this
module is first imported; nothing else in the engine touches a file.

Each locale holds named sections: ``engine`` (every stable code the engine emits), ``problems`` and ``titles``
(the service's error codes), ``entries``, ``formats``, ``types`` and ``words`` (what was wrong with a request),
``presets`` and ``variants`` (the rules catalogue), ``page`` and ``cards`` (the web page's own texts).

Messages the rules document says the app always shows are listed in ``ALWAYS_SHOWN``; every other message
appears only when the game's error explanations are switched on.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Final, Literal

from pyramide.engine.codes import Code

Locale = Literal["hu", "en"]
LOCALES: Final = ("hu", "en")
DEFAULT_LOCALE: Final[Locale] = "hu"
Texts = dict[str, dict[Locale, str]]
"""One section of the catalogue: each key's text by locale."""


def catalogue_file() -> Path:
    """The catalogue: beside the installed package's web client, else in the source tree's ``web/``."""
    package = Path(__file__).resolve().parents[1]
    for web in (package / "web", package.parents[1] / "web"):
        if (web / "messages.json").is_file():
            return web / "messages.json"
    raise FileNotFoundError(f"no messages.json beside {package}")


CATALOGUE_FILE: Final = catalogue_file()
_LOADED: Final[dict[str, dict[str, object]]] = json.loads(CATALOGUE_FILE.read_text(encoding="utf-8"))


def section(name: str) -> Texts:
    """One section of the catalogue whose entries are plain texts, as each key's text by locale."""
    texts: Texts = {}
    for locale in LOCALES:
        entries = _LOADED[locale][name]
        assert isinstance(entries, dict), name
        for key, text in entries.items():
            texts.setdefault(key, {})[locale] = str(text)
    return texts


def nested(name: str) -> dict[str, dict[str, dict[Locale, str]]]:
    """A section whose entries are objects of texts (``presets``: each preset's ``name`` and ``description``)."""
    out: dict[str, dict[str, dict[Locale, str]]] = {}
    for locale in LOCALES:
        entries = _LOADED[locale][name]
        assert isinstance(entries, dict), name
        for key, fields in entries.items():
            for field, text in fields.items():
                out.setdefault(key, {}).setdefault(field, {})[locale] = str(text)
    return out


CATALOGUE: Final[Texts] = {Code(k): v for k, v in section("engine").items()}
"""The engine's codes and their texts."""

_PLACEHOLDER = re.compile(r"(:? *)\{(\w+)\}")
ALWAYS_SHOWN: Final = frozenset({Code.SUM_MUST_BE_13, Code.NO_MORE_MOVES, Code.WON})


def message(code: str, locale: str = DEFAULT_LOCALE, **params: str) -> str:
    """The text for ``code`` in ``locale`` (Hungarian for an unknown locale), with ``params`` filled in."""
    return render(CATALOGUE[code], locale, params)


def render(texts: Mapping[Locale, str], locale: str, params: Mapping[str, str]) -> str:
    """One entry of a catalogue section in ``locale``; a missing parameter drops its placeholder with the colon
    before it."""
    text = texts["en"] if locale == "en" else texts["hu"]
    return _PLACEHOLDER.sub(lambda m: m[0].replace(f"{{{m[2]}}}", params[m[2]]) if m[2] in params else "", text)
