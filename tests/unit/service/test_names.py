"""Player names that would render blank are refused; any name with a visible character is kept (issue 41, item 10).
A property over arbitrary Unicode text, checked against Unicode's own categories, independently of the generated
character classes the schema uses."""

from __future__ import annotations

import unicodedata

from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import TypeAdapter, ValidationError

from pyramide.service.accounts.schemas import CreatePlayerBody

_BODY = TypeAdapter(CreatePlayerBody)
_IGNORABLE = [(0x00AD, 0x00AD), (0x034F, 0x034F), (0x061C, 0x061C), (0x115F, 0x1160), (0x17B4, 0x17B5),
              (0x180B, 0x180F), (0x200B, 0x200F), (0x202A, 0x202E), (0x2060, 0x206F), (0x3164, 0x3164),
              (0xFE00, 0xFE0F), (0xFEFF, 0xFEFF), (0xFFA0, 0xFFA0), (0xFFF0, 0xFFF8), (0x1BCA0, 0x1BCA3),
              (0x1D173, 0x1D17A), (0xE0000, 0xE0FFF)]  # fmt: skip
"""Default_Ignorable_Code_Point, Unicode 14 (DerivedCoreProperties.txt)."""


def _shows_something(char: str) -> bool:
    """A character that a renderer draws by itself: a letter, digit, punctuation or symbol, not default-ignorable,
    not the braille blank."""
    code = ord(char)
    if any(low <= code <= high for low, high in _IGNORABLE) or code == 0x2800:
        return False
    return unicodedata.category(char)[0] in "LNPS"


def _accepted(name: str) -> str | None:
    try:
        return _BODY.validate_python({"name": name}).name
    except ValidationError:
        return None


_BLANK = st.sampled_from(
    ["\u3164", "\u2800", "\uffa0", "\u115f", "\u1160", " ", "\u3000", "\u00a0", "\u0301", "\u20dd", "\ufe0f",
     "\u034f", "\u200b", "\u00ad", "\u17b4", "\U000e0100"]
)  # fmt: skip


@settings(max_examples=400, deadline=None)
@given(st.text(min_size=1, max_size=24))
def test_every_accepted_name_shows_a_character(name: str) -> None:
    kept = _accepted(name)
    if kept is not None:
        assert any(_shows_something(c) for c in kept), ascii(name)


@settings(max_examples=300, deadline=None)
@given(st.lists(_BLANK | st.characters(categories=["Mn", "Me", "Cf", "Zs"]), min_size=1, max_size=24))
def test_names_of_blanks_marks_and_invisible_characters_alone_are_refused(chars: list[str]) -> None:
    assert _accepted("".join(chars)) is None, ascii("".join(chars))


_SPACES_AND_MARKS = st.sampled_from([" ", "\u3000", "\u00a0", "\u0301", "\u20dd", "\ufe0f", "\u034f", "\U000e0100"])


@settings(max_examples=300, deadline=None)
@given(
    st.lists(_SPACES_AND_MARKS, max_size=10),
    st.characters(categories=["Lu", "Ll", "Lo", "Nd", "Po", "So"]).filter(_shows_something),
    st.lists(_SPACES_AND_MARKS, max_size=10),
)
def test_one_visible_character_among_blanks_makes_a_name(before: list[str], visible: str, after: list[str]) -> None:
    name = "".join(before) + visible + "".join(after)
    if len(unicodedata.normalize("NFC", visible)) == 1:  # else refused as before: NFC would change the name
        assert _accepted(name) is not None, ascii(name)
