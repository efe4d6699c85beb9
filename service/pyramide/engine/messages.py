"""The message catalogue: every stable code the engine emits, in Hungarian (the rules document's own strings
where it quotes one) and English.

Messages the rules document says the app always shows are listed in ``ALWAYS_SHOWN``; every other message
appears only when the game's error explanations are switched on.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Final, Literal

from pyramide.engine.codes import Code

Locale = Literal["hu", "en"]
LOCALES: Final = ("hu", "en")
DEFAULT_LOCALE: Final[Locale] = "hu"

CATALOGUE: Final[dict[str, dict[Locale, str]]] = {
    # The rules document's own messages.
    Code.CARD_COVERED: {"hu": "Ezt a lapot egy másik lap takarja", "en": "This card is covered by another card"},
    Code.SUM_MUST_BE_13: {"hu": "Az összegnek ennyinek kell lennie: 13", "en": "The sum must be: 13"},
    Code.NO_MORE_MOVES: {"hu": "Nincs több lehetséges lépés", "en": "No more possible moves"},
    # Illegal moves.
    Code.CARD_REMOVED: {
        "hu": "Ez a lap már lekerült: {card}",
        "en": "This card has already been removed: {card}",
    },
    Code.NOT_FREE: {
        "hu": "Ez a lap most nem játszható ki: {card}",
        "en": "This card cannot be played now: {card}",
    },
    Code.NOT_A_KING: {
        "hu": "Önmagában csak király távolítható el, ez nem az: {card}",
        "en": "Only a king can be removed on its own, and this is not one: {card}",
    },
    Code.SAME_CARD: {"hu": "Egy lap nem alkothat párt önmagával", "en": "A card cannot pair with itself"},
    Code.STOCK_EMPTY: {"hu": "A húzópakli üres", "en": "The stock is empty"},
    Code.STOCK_NOT_EMPTY: {
        "hu": "A dobópakli csak üres húzópaklinál forgatható újra",
        "en": "The waste can only be turned over when the stock is empty",
    },
    Code.WASTE_EMPTY: {"hu": "Nincs újraforgatható lap", "en": "There are no cards to turn over"},
    Code.NO_RECYCLES_LEFT: {
        "hu": "A húzópakli többször nem forgatható újra",
        "en": "No more turn-overs of the stock are allowed",
    },
    Code.GAME_OVER: {"hu": "A játszma véget ért", "en": "The game is over"},
    Code.NOTHING_TO_UNDO: {"hu": "Nincs visszavonható lépés", "en": "There is nothing to undo"},
    # Input that cannot be read.
    Code.INVALID_CARD: {"hu": "Érvénytelen lapkód: {text}", "en": "Not a card code: {text}"},
    Code.INVALID_DEAL_CODE: {"hu": "Érvénytelen játszmakód: {text}", "en": "Not a valid deal code: {text}"},
    Code.INVALID_RULES: {"hu": "Érvénytelen szabálybeállítás", "en": "Invalid rules"},
    Code.INVALID_LAYOUT: {"hu": "Érvénytelen kezdőállás", "en": "Invalid layout"},
    Code.INVALID_MOVE: {"hu": "Érvénytelen lépés", "en": "Not a valid move"},
    Code.INVALID_STATE: {"hu": "A tárolt játszma sérült", "en": "The stored game is damaged"},
    # Feedback on taps and moves.
    Code.SELECTED: {"hu": "Kijelölve: {card}", "en": "Selected: {card}"},
    Code.DESELECTED: {"hu": "Kijelölés megszüntetve", "en": "Selection cleared"},
    Code.REMOVED: {"hu": "Eltávolítva: {cards}", "en": "Removed: {cards}"},
    Code.DRAWN: {"hu": "Felhúzva: {card}", "en": "Drawn: {card}"},
    Code.RECYCLED: {"hu": "A dobópakli újraforgatva", "en": "The waste was turned over"},
    Code.UNDONE: {"hu": "Visszavonva: {move}", "en": "Undone: {move}"},
    Code.WON: {"hu": "Gratulálunk, nyertél!", "en": "Congratulations, you won!"},
}

_PLACEHOLDER = re.compile(r"(:? *)\{(\w+)\}")
ALWAYS_SHOWN: Final = frozenset({Code.SUM_MUST_BE_13, Code.NO_MORE_MOVES, Code.WON})


def message(code: str, locale: str = DEFAULT_LOCALE, **params: str) -> str:
    """The text for ``code`` in ``locale`` (Hungarian for an unknown locale), with ``params`` filled in."""
    return render(CATALOGUE[code], locale, params)


def render(texts: Mapping[Locale, str], locale: str, params: Mapping[str, str]) -> str:
    """One entry of a catalogue (this one or the service's) in ``locale``; a missing parameter drops its
    placeholder with the colon before it."""
    text = texts["en"] if locale == "en" else texts["hu"]
    return _PLACEHOLDER.sub(lambda m: m[0].replace(f"{{{m[2]}}}", params[m[2]]) if m[2] in params else "", text)
