"""The one loader of the Lua scripts: names become positions, and anything named wrongly is refused at load."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

import pytest

from pyramide.service.infra import scripts
from pyramide.service.infra.scripts import NoKeys, Result, Script


class Keys(NamedTuple):
    first: str
    second: str


class Args(NamedTuple):
    value: int


@pytest.fixture
def lua(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A folder of scripts in place of the service's own."""
    monkeypatch.setattr(scripts, "LUA", tmp_path)
    scripts._source.cache_clear()
    yield tmp_path
    scripts._source.cache_clear()


def test_names_become_positions_results_numbers_and_constants_literals(lua: Path) -> None:
    (lua / "piece.lua").write_text("local function twice(x) return 2 * x end\n")
    (lua / "s.lua").write_text(
        "--! include piece\nredis.call('SET', KEYS.second, twice(ARGV.value) + CONST.MOST)\n"
        "redis.call('DEL', KEYS.first)\nreturn RESULT.TOO_LONG\n"
    )
    text = Script("s", Keys, Args, constants=("MOST",)).text(MOST=12)
    assert text == (
        "local function twice(x) return 2 * x end\nredis.call('SET', KEYS[2], twice(ARGV[1]) + 12)\n"
        f"redis.call('DEL', KEYS[1])\nreturn {Result.TOO_LONG.value}\n"
    )


@pytest.mark.parametrize(
    ("body", "refusal"),
    [
        ("return {KEYS.first, KEYS.second, ARGV.value, KEYS.third}", "names KEYS.third, which it does not declare"),
        ("return {KEYS.first, ARGV.value}", "never names KEYS.second"),
        ("return {KEYS.first, KEYS.second, ARGV[1]}", "by position"),
        ("return {KEYS.first, KEYS.second, ARGV.value, RESULT.SOMETHING}", "RESULT.SOMETHING"),
    ],
)
def test_a_script_naming_what_it_does_not_declare_is_refused(lua: Path, body: str, refusal: str) -> None:
    (lua / "s.lua").write_text(body)
    with pytest.raises(ValueError, match=refusal):
        Script("s", Keys, Args).text()


def test_constants_must_all_be_given_and_be_whole_numbers(lua: Path) -> None:
    (lua / "s.lua").write_text("return CONST.MOST")
    script = Script("s", NoKeys, NoKeys, constants=("MOST",))
    wrongs: list[dict[str, object]] = [
        {},
        {"MOST": 1, "OTHER": 2},
        {"MOST": "1); redis.call('FLUSHALL'"},
        {"MOST": True},
    ]
    for wrong in wrongs:
        with pytest.raises(ValueError, match="constant"):
            script.text(**wrong)  # type: ignore[arg-type]
    assert script.text(MOST=-3) == "return -3"
