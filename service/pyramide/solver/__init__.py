"""Layer 2: pure search over engine states. Winnability, the most pyramid cards any line removes, a line that
achieves it (in the engine's notation, replayable by the engine) and the shortest winning line, for every rule set."""

from pyramide.solver.search import Analysis, solve

__all__ = ["Analysis", "solve"]
