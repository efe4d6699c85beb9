"""The rule presets and variants as the rules catalogue describes them, in Hungarian and English."""

from __future__ import annotations

from pyramide.engine import Rules
from pyramide.engine.messages import Locale

PRESETS: dict[str, tuple[Rules, dict[Locale, tuple[str, str]]]] = {
    "N": (
        Rules(),
        {
            "hu": ("Az alkalmazás szabályai", "Korlátlan újraforgatás, elég kiüríteni a piramist."),
            "en": ("The app's rules", "Unlimited turn-overs; clearing the pyramid wins."),
        },
    ),
    "2S": (
        Rules(recycles=2, stock_waste_pairs=True),
        {
            "hu": ("Asztali szabályok", "Két újraforgatás; a felhúzott lap párosítható az alatta lévővel."),
            "en": ("Desktop rules", "Two turn-overs; the card just drawn pairs with the waste card beneath."),
        },
    ),
    "0W": (
        Rules(recycles=0, strict_win=True),
        {
            "hu": ("Hagyományos szabályok", "Nincs újraforgatás, és minden lapot el kell távolítani."),
            "en": ("Traditional rules", "No turn-over, and every card must be removed."),
        },
    ),
}

VARIANTS: dict[str, dict[Locale, tuple[str, str]]] = {
    "recycles": {
        "hu": ("Korlátozott újraforgatás", "A húzópakli csak adott számú alkalommal (0–9) forgatható újra."),
        "en": ("Limited turn-overs", "The stock may be turned over only a set number of times (0–9)."),
    },
    "stock_waste_pairs": {
        "hu": ("Húzópakli és dobópakli párosítása", "Az éppen felhúzott lap párosítható az alatta lévő lappal."),
        "en": ("Stock–waste pairing", "The card just drawn may pair with the waste card directly beneath it."),
    },
    "cover_pairs": {
        "hu": ("Párosítás a takaró lappal", "Egy lap párosítható azzal az egyetlen szabad lappal, amely takarja."),
        "en": ("Pairing with the covering card", "A card may pair with the single free card still covering it."),
    },
    "strict_win": {
        "hu": ("Szigorú győzelem", "Nemcsak a piramist, hanem mind az 52 lapot el kell távolítani."),
        "en": ("Strict win", "Not only the pyramid: all 52 cards must be removed."),
    },
}
