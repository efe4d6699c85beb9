"""Daily challenges: one sealed, solver-proven deal per rule preset per UTC day, played once per player and ranked
on a verified board."""

from pyramide.service.challenges.closes import ChallengeCloses
from pyramide.service.challenges.deals import ChallengeDeals
from pyramide.service.challenges.service import ChallengeService

__all__ = ["ChallengeCloses", "ChallengeDeals", "ChallengeService"]
