"""The solver's search modules run compiled by mypyc, as the image ships them, and never from stale builds.

``scripts/setup.sh`` (``uv sync``) compiles them in place whenever their sources change (``tool.uv.cache-keys``);
a test run that imported an older build would test code that is no longer there, so it fails and says why.
"""

from __future__ import annotations

import importlib
from importlib.machinery import EXTENSION_SUFFIXES
from pathlib import Path
from types import FunctionType

import pytest

SOLVER = Path(__file__).resolve().parents[3] / "service" / "pyramide" / "solver"
COMPILED = ("bounds", "pool", "position", "search", "shortest", "twins")
"""The modules ``pyproject.toml`` has hatch-mypyc compile."""


@pytest.mark.parametrize("name", COMPILED)
def test_the_solver_module_runs_compiled(name: str) -> None:
    module = importlib.import_module(f"pyramide.solver.{name}")
    functions = [value for value in vars(module).values() if getattr(value, "__module__", None) == module.__name__]
    assert functions, name
    interpreted = [value.__name__ for value in functions if isinstance(value, FunctionType)]
    assert not interpreted, f"{name} runs interpreted ({', '.join(interpreted)}): run scripts/setup.sh"


@pytest.mark.parametrize("name", COMPILED)
def test_the_compiled_module_is_built_from_its_source_as_it_is(name: str) -> None:
    source = SOLVER / f"{name}.py"
    built = [SOLVER / f"{name}{suffix}" for suffix in EXTENSION_SUFFIXES if (SOLVER / f"{name}{suffix}").exists()]
    assert built, f"no compiled {name}: run scripts/setup.sh"
    stale = f"{built[0].name} is older than {source.name}: run scripts/setup.sh"
    assert built[0].stat().st_mtime >= source.stat().st_mtime, stale
