"""Deals: their codes' cards, the solver's analysis, the rules catalogue, and sealed deals' secret."""

from pyramide.service.deals.analysis import HINT_BUDGET, WINNABLE_ONLY_ATTEMPTS, Priority, Solver
from pyramide.service.deals.par import Par, ParBook, ParStatus, par_shown
from pyramide.service.deals.sealed import DealSecret

__all__ = [
    "HINT_BUDGET",
    "WINNABLE_ONLY_ATTEMPTS",
    "DealSecret",
    "Par",
    "ParBook",
    "ParStatus",
    "Priority",
    "Solver",
    "par_shown",
]
