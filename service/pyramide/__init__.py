"""Pyramide solitaire: the rules engine, the solver and the REST/JSON game service.

Layers, each importing only those before it: :mod:`pyramide.engine` (pure rules), then the solver, then the
service. The command line lives in :mod:`pyramide.cli`.
"""

__version__ = "0.1.0"
