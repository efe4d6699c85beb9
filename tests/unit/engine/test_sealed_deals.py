"""Sealed deals: dealt from a server secret, reproducible with it (golden vectors), unknowable without it."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pyramide.engine import DealCode, Rules
from pyramide.engine.cards import DECK
from pyramide.engine.dealing import sealed_layout, sealed_seed

TEST_SECRET = b"pyramide-test-secret"
GOLDEN = [  # also in docs/deal-codes.md; the seed checked with `openssl dgst -sha256 -hmac`
    ("2026-12-01/N#0", 0x7B97B643014943E3, "PY1-N-LBGPBKSOAVPKZHINETNKMPSOOWLRQKUWHPAORQFEAGZXLWUPGZ"),
    ("2026-12-01/N#1", 0xA6FE9B2B4E3DB4A8, "PY1-N-LBLAWWTWIKVEUDMSYOHGNWFHKAIBJYZUXDUFVUMKCGMZIZLTCZ"),
    ("2026-12-01/2S#0", 0x0680B6290827B534, "PY1-N-LBWYUDDWZQADMSFJWYAURJVGOELWWOVFXJSREBXVWABVMPGLTN"),
]


@pytest.mark.parametrize(("identity", "seed", "code"), GOLDEN)
def test_golden_vectors(identity: str, seed: int, code: str) -> None:
    assert sealed_seed(TEST_SECRET, identity) == seed
    layout = sealed_layout(TEST_SECRET, identity)
    assert str(DealCode.for_layout(layout, Rules())) == code
    assert DealCode.parse(code).deal() == layout, "once revealed, the deal is an ordinary long-form code"


@given(identity=st.text(max_size=40), secret=st.binary(min_size=16, max_size=64))
def test_a_sealed_deal_holds_each_card_once_and_depends_on_the_secret(identity: str, secret: bytes) -> None:
    layout = sealed_layout(secret, identity)
    assert sorted((*layout.pyramid, *layout.waste, *layout.stock)) == list(DECK)
    assert len(layout.waste) == 1
    other = sealed_layout(secret + b"x", identity)
    assert sealed_seed(secret, identity) != sealed_seed(secret + b"x", identity) or other == layout
