"""Claims on outboxes: a process works on an outbox only while it holds its claim (``lua/events_claim.lua``), which
it renews while it works (``lua/events_renew.lua``) and lets go when done (``lua/events_release.lua``), so two
processes, or two tasks of one, never work one outbox at once, and a dead process's claim runs out."""

from __future__ import annotations

from typing import Final, NamedTuple

from pyramide.service.infra.scripts import Script

LEASE_MS: Final = 10_000
"""How long a claim on an outbox lasts unless renewed: a process killed while working on one holds it that long."""
RENEW_S: Final = 3.0
"""How often a process renews the claims it works under (well within ``LEASE_MS``)."""


class ClaimKeys(NamedTuple):
    due: str
    claims: str


class ClaimArgs(NamedTuple):
    now: int
    lease_ms: int


class ReleaseKeys(NamedTuple):
    due: str
    claims: str


class ReleaseArgs(NamedTuple):
    outbox: str
    lease: str
    next: int | str
    """When the outbox is due again (ms); '' when it is empty."""
    now: int


class RenewArgs(NamedTuple):
    outbox: str
    lease: str
    now: int
    lease_ms: int


CLAIM: Final = Script("events_claim", ClaimKeys, ClaimArgs)
RELEASE: Final = Script("events_release", ReleaseKeys, ReleaseArgs)
RENEW: Final = Script("events_renew", ReleaseKeys, RenewArgs)
