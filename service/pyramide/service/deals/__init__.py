"""Deals: their codes' cards, the solver's analysis, and the rules catalogue."""

from pyramide.service.deals.analysis import WINNABLE_ONLY_ATTEMPTS, Solver

__all__ = ["WINNABLE_ONLY_ATTEMPTS", "Solver"]
