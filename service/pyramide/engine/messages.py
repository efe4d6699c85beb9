"""The message catalogue: every stable code the engine emits, in Hungarian (the rules document's own strings
where it quotes one) and English.

Messages the rules document says the app always shows are listed in ``ALWAYS_SHOWN``; every other message
appears only when the game's error explanations are switched on.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Final, Literal

Locale = Literal["hu", "en"]
LOCALES: Final = ("hu", "en")
DEFAULT_LOCALE: Final[Locale] = "hu"

CATALOGUE: Final[dict[str, dict[Locale, str]]] = {
    # The rules document's own messages.
    "card_covered": {"hu": "Ezt a lapot egy másik lap takarja", "en": "This card is covered by another card"},
    "sum_must_be_13": {"hu": "Az összegnek ennyinek kell lennie: 13", "en": "The sum must be: 13"},
    "no_more_moves": {"hu": "Nincs több lehetséges lépés", "en": "No more possible moves"},
    # Illegal moves.
    "card_removed": {
        "hu": "Ez a lap már lekerült: {card}",
        "en": "This card has already been removed: {card}",
    },
    "not_free": {
        "hu": "Ez a lap most nem játszható ki: {card}",
        "en": "This card cannot be played now: {card}",
    },
    "not_a_king": {
        "hu": "Önmagában csak király távolítható el, ez nem az: {card}",
        "en": "Only a king can be removed on its own, and this is not one: {card}",
    },
    "same_card": {"hu": "Egy lap nem alkothat párt önmagával", "en": "A card cannot pair with itself"},
    "stock_empty": {"hu": "A húzópakli üres", "en": "The stock is empty"},
    "stock_not_empty": {
        "hu": "A dobópakli csak üres húzópaklinál forgatható újra",
        "en": "The waste can only be turned over when the stock is empty",
    },
    "waste_empty": {"hu": "Nincs újraforgatható lap", "en": "There are no cards to turn over"},
    "no_recycles_left": {
        "hu": "A húzópakli többször nem forgatható újra",
        "en": "No more turn-overs of the stock are allowed",
    },
    "game_over": {"hu": "A játszma véget ért", "en": "The game is over"},
    "nothing_to_undo": {"hu": "Nincs visszavonható lépés", "en": "There is nothing to undo"},
    # Input that cannot be read.
    "invalid_card": {"hu": "Érvénytelen lapkód: {text}", "en": "Not a card code: {text}"},
    "invalid_deal_code": {"hu": "Érvénytelen játszmakód: {text}", "en": "Not a valid deal code: {text}"},
    "invalid_rules": {"hu": "Érvénytelen szabálybeállítás", "en": "Invalid rules"},
    "invalid_layout": {"hu": "Érvénytelen kezdőállás", "en": "Invalid layout"},
    "invalid_move": {"hu": "Érvénytelen lépés", "en": "Not a valid move"},
    "invalid_state": {"hu": "A tárolt játszma sérült", "en": "The stored game is damaged"},
    # Feedback on taps and moves.
    "selected": {"hu": "Kijelölve: {card}", "en": "Selected: {card}"},
    "deselected": {"hu": "Kijelölés megszüntetve", "en": "Selection cleared"},
    "removed": {"hu": "Eltávolítva: {cards}", "en": "Removed: {cards}"},
    "drawn": {"hu": "Felhúzva: {card}", "en": "Drawn: {card}"},
    "recycled": {"hu": "A dobópakli újraforgatva", "en": "The waste was turned over"},
    "undone": {"hu": "Visszavonva: {move}", "en": "Undone: {move}"},
    "won": {"hu": "Gratulálunk, nyertél!", "en": "Congratulations, you won!"},
}

_PLACEHOLDER = re.compile(r"(:? *)\{(\w+)\}")
ALWAYS_SHOWN: Final = frozenset({"sum_must_be_13", "no_more_moves", "won"})


def message(code: str, locale: str = DEFAULT_LOCALE, **params: str) -> str:
    """The text for ``code`` in ``locale`` (Hungarian for an unknown locale), with ``params`` filled in."""
    return render(CATALOGUE[code], locale, params)


def render(texts: Mapping[Locale, str], locale: str, params: Mapping[str, str]) -> str:
    """One entry of a catalogue (this one or the service's) in ``locale``; a missing parameter drops its
    placeholder with the colon before it."""
    text = texts["en"] if locale == "en" else texts["hu"]
    return _PLACEHOLDER.sub(lambda m: m[0].replace(f"{{{m[2]}}}", params[m[2]]) if m[2] in params else "", text)
