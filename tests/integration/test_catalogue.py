"""One message catalogue: the service's texts and the page's come from the same file, complete in every locale."""

from __future__ import annotations

import json
import re
from typing import Any

import httpx

from pyramide.engine.codes import Code
from pyramide.engine.messages import CATALOGUE_FILE, LOCALES
from pyramide.service.errors import ErrorCode
from pyramide.service.http.problems import DOMAIN_STATUS, HttpCode
from pyramide.service.http.web import WEB_DIR

_PLACEHOLDER = re.compile(r"\{(\w+)\}")


def _shape(entries: Any, prefix: str = "") -> dict[str, set[str]]:
    """Every text's key path, with the placeholders it takes."""
    if isinstance(entries, str):
        return {prefix: set(_PLACEHOLDER.findall(entries))}
    assert isinstance(entries, dict) and entries, prefix
    return {k: v for key, inner in entries.items() for k, v in _shape(inner, f"{prefix}/{key}").items()}


def test_every_text_exists_in_every_locale_with_the_same_placeholders() -> None:
    catalogue = json.loads(CATALOGUE_FILE.read_text(encoding="utf-8"))
    assert set(catalogue) == set(LOCALES)
    hungarian = _shape(catalogue["hu"])
    for locale in LOCALES:
        assert _shape(catalogue[locale]) == hungarian, locale


def test_the_page_and_the_service_read_the_same_catalogue(live_url: str) -> None:
    """The page fetches ``messages.json`` beside its script, which the service serves from the very file it read its
    own texts from: a problem's title, a rule preset's name and the page's texts are the file's."""
    assert CATALOGUE_FILE == WEB_DIR / "messages.json"
    assert 'fetch(new URL("messages.json", import.meta.url))' in (WEB_DIR / "texts.js").read_text(encoding="utf-8")
    on_file = json.loads(CATALOGUE_FILE.read_text(encoding="utf-8"))
    with httpx.Client(base_url=live_url) as http:
        served = http.get("/play/messages.json")
        assert served.status_code == 200 and served.headers["content-type"].startswith("application/json")
        assert served.json() == on_file
        for locale in LOCALES:
            problem = http.get("/v1/games/no-such-game", headers={"Accept-Language": locale}).json()
            assert problem["code"] == "unauthorized" and problem["title"] == on_file[locale]["problems"]["unauthorized"]
            rules = http.get("/v1/rules", headers={"Accept-Language": locale}).json()
            assert rules["presets"][0]["name"] == on_file[locale]["presets"][rules["presets"][0]["segment"]]["name"]


def test_every_code_has_its_text_and_every_domain_code_its_status() -> None:
    """A code the service can answer with and no text for it would be a 500; a text no code uses is dead."""
    catalogue = json.loads(CATALOGUE_FILE.read_text(encoding="utf-8"))["hu"]
    assert set(catalogue["engine"]) == set(Code)
    assert set(catalogue["problems"]) == set(ErrorCode) | set(HttpCode)
    assert set(DOMAIN_STATUS) == set(ErrorCode)  # a domain code without a status would be a 500
