"""The rule presets and variants of the rules catalogue; their names and descriptions are the message catalogue's
``presets`` and ``variants``."""

from __future__ import annotations

from typing import Final

from pyramide.engine import Rules
from pyramide.engine.messages import Locale, nested

PRESET_RULES: Final = {
    "N": Rules(),
    "2S": Rules(recycles=2, stock_waste_pairs=True),
    "0W": Rules(recycles=0, strict_win=True),
}
_PRESET_TEXTS: Final = nested("presets")
_VARIANT_TEXTS: Final = nested("variants")
PRESETS: Final[dict[str, tuple[Rules, dict[Locale, tuple[str, str]]]]] = {
    key: (
        rules,
        {
            locale: (_PRESET_TEXTS[key]["name"][locale], _PRESET_TEXTS[key]["description"][locale])
            for locale in ("hu", "en")
        },
    )
    for key, rules in PRESET_RULES.items()
}
VARIANTS: Final[dict[str, dict[Locale, tuple[str, str]]]] = {
    key: {locale: (texts["name"][locale], texts["description"][locale]) for locale in ("hu", "en")}
    for key, texts in _VARIANT_TEXTS.items()
}
