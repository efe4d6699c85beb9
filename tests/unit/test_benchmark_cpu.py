"""``benchmarks/process_cpu.py``, which ``benchmarks/game_cost.py`` counts a whole game's CPU with, against real
processes: a child's own CPU, a grandchild found below it, and a child that ended counted to its end through its
parent's reaped time."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
BURN_S = 0.2

BURN = f"""
import time
start = time.process_time()
while time.process_time() - start < {BURN_S}:
    pass
"""
PARENT = f"""
import subprocess, sys
GRANDCHILD = {"import sys; print(1, flush=True); sys.stdin.readline()" + BURN!r}
print("child", flush=True)
sys.stdin.readline()
{BURN}
grandchild = subprocess.Popen([sys.executable, "-c", GRANDCHILD], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
grandchild.stdout.readline()
print(grandchild.pid, flush=True)
sys.stdin.readline()
grandchild.stdin.close()
grandchild.wait()
print("reaped", flush=True)
sys.stdin.readline()
"""
"""A child that waits for a line, burns ``BURN_S`` of CPU, starts a grandchild that waits; told again, it lets the
grandchild burn as much and end, and reaps it."""


def _process_cpu() -> ModuleType:
    spec = importlib.util.spec_from_file_location("process_cpu", BENCHMARKS / "process_cpu.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclass reads its own module's namespace
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def child() -> Iterator[subprocess.Popen[str]]:
    process = subprocess.Popen([sys.executable, "-c", PARENT], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert process.stdout is not None and process.stdout.readline() == "child\n"
    yield process
    process.kill()
    process.wait()


def _tell(process: subprocess.Popen[str]) -> str:
    assert process.stdin is not None and process.stdout is not None
    process.stdin.write("go\n")
    process.stdin.flush()
    return process.stdout.readline().strip()


def test_a_family_s_cpu_is_read_the_ended_child_s_through_its_parent(child: subprocess.Popen[str]) -> None:
    cpu = _process_cpu()
    kind = lambda p: "parent" if p.pid == child.pid else "child"  # noqa: E731
    before = cpu.sample(child.pid)
    assert set(before) == {child.pid}
    grandchild = int(_tell(child))  # the child burnt BURN_S and started the grandchild
    during = cpu.sample(child.pid)
    assert set(during) == {child.pid, grandchild}
    assert during[grandchild].ppid == child.pid
    assert "-c" in during[grandchild].command
    assert BURN_S * 0.9 <= cpu.spent(before, during, child.pid, kind)["parent"] <= BURN_S + 0.5
    assert _tell(child) == "reaped"  # the grandchild burnt BURN_S, ended, and was waited for
    after = cpu.sample(child.pid)
    assert set(after) == {child.pid}
    assert after[child.pid].reaped_s >= BURN_S * 0.9
    ended = cpu.spent(during, after, child.pid, kind)
    assert BURN_S * 0.9 <= ended["child"] <= BURN_S + 0.5  # counted to its end, under its own kind


def test_a_process_that_is_gone_is_refused() -> None:
    cpu = _process_cpu()
    process = subprocess.Popen([sys.executable, "-c", "pass"])
    process.wait()
    with pytest.raises(ProcessLookupError):
        cpu.read(process.pid)
