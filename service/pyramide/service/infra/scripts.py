"""The service's Lua scripts: each in a file of its own under ``infra/lua``, all loaded and run by :class:`Script`.

The files live in one folder beside this loader, not beside their domains: several scripts share pieces (the rate
limit's ``gcra``, the game lists' ``list_game``), which a script takes in with a line ``--! include <name>``, and the
layout test finds every script in one place.

A script names its keys and arguments, never their positions: it writes ``KEYS.state`` and ``ARGV.basis``, and the
Python side declares them once, as the fields of two named tuples that callers build by name. The loader turns each
name into its position (``KEYS[1]``) as it reads the file, so the text Redis runs is what a hand-written script
would be. In the same way ``RESULT.CONFLICT`` becomes the number of :class:`Result`'s member, the one list of what
scripts answer, and ``CONST.INTERVAL`` a constant the caller gives when it loads the script (settings that never
change while a process runs, baked into the text rather than sent with every call). Anything named that is not
declared, and anything declared that the script never names, is an error when the script is loaded.
"""

from __future__ import annotations

import enum
import hashlib
import re
from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import Any, Final, Generic, NamedTuple, TypeVar

from opentelemetry.trace import SpanKind, get_current_span
from redis.exceptions import NoScriptError

from pyramide.service.infra import tracing
from pyramide.service.infra.redis import RedisClient

LUA: Final = Path(__file__).with_name("lua")
"""Where every script is: ``<name>.lua``."""


class Result(enum.IntEnum):
    """What a script answers first, shared by every script (``RESULT.<NAME>`` in Lua) and its caller."""

    OK = 1
    """The change was made."""
    MISSING = 0
    """What the script was to change is not there (or not any more): nothing was written."""
    CONFLICT = -1
    """Redis holds another state than the one acted on: nothing was written."""
    KEPT = 2
    """A request with the same Idempotency-Key was applied before: its response comes back, nothing was written."""
    LIMITED = 3
    """Over a rate limit: nothing was written; the wait in ms comes back."""
    UNAUTHORIZED = 4
    """The request's token is no longer the player's (or the player is banned): nothing was written."""
    ATTEMPTED = 5
    """The player has an attempt at this daily challenge already: nothing was written."""
    TOO_MANY_UNFINISHED = 6
    """The player has ``max_unfinished_games`` unfinished games already: nothing was written."""
    TOO_LONG = 7
    """The game's record holds ``max_game_operations`` already: nothing was written."""
    OVER_QUOTA = 8
    """A quota is used up: nothing was counted; the ms until it starts afresh come back."""
    ERASED = 9
    """The player is being erased (its tombstone is set): nothing was written."""
    BANNED = 10
    """The player is banned: the change was made, but what shows the player to others is to be kept aside."""
    UNCHANGED = 11
    """It was done before: nothing was written."""
    FULL = 12
    """There is no room for it: nothing was written."""
    FORBIDDEN = 13
    """It is not the caller's to do: nothing was written."""
    EXPIRED = 14
    """A retry whose Idempotency-Key was used before but whose answer is no longer kept: nothing was written."""


Keys = TypeVar("Keys", bound=tuple[Any, ...])
Args = TypeVar("Args", bound=tuple[Any, ...])


class NoKeys(NamedTuple):
    """For a script that takes no keys (or no arguments)."""


_NAMED = re.compile(r"\b(KEYS|ARGV|RESULT|CONST)\.([A-Za-z_][A-Za-z0-9_]*)")
_POSITIONAL = re.compile(r"\b(KEYS|ARGV)\s*\[")
_INCLUDE = re.compile(r"^--! include ([a-z_]+)$", re.MULTILINE)


@cache
def _source(name: str) -> str:
    """A script's file with its includes in place (an included file includes nothing)."""
    text = (LUA / f"{name}.lua").read_text(encoding="utf-8")
    return _INCLUDE.sub(lambda m: (LUA / f"{m.group(1)}.lua").read_text(encoding="utf-8").rstrip("\n"), text)


class Script(Generic[Keys, Args]):
    """One script: its file ``name`` and the named tuples of its keys and arguments; :meth:`load` makes it ready
    to run on one client."""

    def __init__(self, name: str, keys: type[Keys], args: type[Args], constants: tuple[str, ...] = ()) -> None:
        self.name = name
        self.keys: tuple[str, ...] = keys._fields  # type: ignore[attr-defined]
        self.args: tuple[str, ...] = args._fields  # type: ignore[attr-defined]
        self.constants = constants

    def text(self, **constants: int) -> str:
        """The script as Redis runs it, with ``constants`` (every one the script declares, each an int) set."""
        if set(constants) != set(self.constants):
            raise ValueError(f"{self.name}.lua takes the constants {self.constants}, given {tuple(constants)}")
        for name, value in constants.items():
            if type(value) is not int:
                raise ValueError(f"{self.name}.lua: constant {name} must be an int, not {value!r}")
        source = _source(self.name)
        if _POSITIONAL.search(source):
            raise ValueError(f"{self.name}.lua names a key or an argument by position: name it (KEYS.<name>)")
        places: dict[str, Mapping[str, str]] = {
            "KEYS": {n: f"KEYS[{i}]" for i, n in enumerate(self.keys, 1)},
            "ARGV": {n: f"ARGV[{i}]" for i, n in enumerate(self.args, 1)},
            "RESULT": {r.name: str(r.value) for r in Result},
            "CONST": {n: str(v) for n, v in constants.items()},
        }
        used: set[tuple[str, str]] = set()

        def place(match: re.Match[str]) -> str:
            kind, name = match.group(1), match.group(2)
            if name not in places[kind]:
                raise ValueError(f"{self.name}.lua names {kind}.{name}, which it does not declare")
            used.add((kind, name))
            return places[kind][name]

        text = _NAMED.sub(place, source)
        unused = [f"{k}.{n}" for k in ("KEYS", "ARGV", "CONST") for n in places[k] if (k, n) not in used]
        if unused:
            raise ValueError(f"{self.name}.lua never names {', '.join(unused)}")
        return text

    def load(self, redis: RedisClient, **constants: int) -> Loaded[Keys, Args]:
        """The script ready to run on ``redis`` (loaded into Redis on its first call); each call a span of its own
        while tracing is on (:mod:`tracing`), decided here once so that a call pays nothing while it is off."""
        active = tracing.tracer()
        if active is None:
            return Loaded(redis, self.text(**constants))
        return Traced(redis, self.text(**constants), self.name, active)


class Loaded(Generic[Keys, Args]):
    """A script's text on one client: EVALSHA straight through the client (redis-py's ``Script.__call__`` does an
    import and a Protocol check on every call, which the move routes would pay every time), loading the script
    again if the server lost it (a restart, a failover)."""

    __slots__ = ("redis", "sha", "text")

    def __init__(self, redis: RedisClient, text: str) -> None:
        self.redis = redis
        self.text = text
        self.sha = hashlib.sha1(text.encode(), usedforsecurity=False).hexdigest()

    async def __call__(self, keys: Keys, args: Args) -> Any:
        try:
            return await self.redis.evalsha(self.sha, len(keys), *keys, *args)
        except NoScriptError:
            await self.redis.script_load(self.text)
            return await self.redis.evalsha(self.sha, len(keys), *keys, *args)


class Traced(Loaded[Keys, Args]):
    """A loaded script whose every call within a span (a request's, a solver search's, a webhook delivery's) is a
    child span ``redis <name>``, with the database system and the script's name as attributes. A call outside any
    span (a background job's poll, five times a second) starts no trace of its own: it would bury the requests'."""

    __slots__ = ("attributes", "span_name", "tracer")

    def __init__(self, redis: RedisClient, text: str, name: str, tracer: Any) -> None:
        super().__init__(redis, text)
        self.span_name = f"redis {name}"
        self.attributes = {"db.system.name": "redis", "db.operation.name": "EVALSHA", "db.stored_procedure.name": name}
        self.tracer = tracer

    async def __call__(self, keys: Keys, args: Args) -> Any:
        if not get_current_span().get_span_context().is_valid:
            return await super().__call__(keys, args)
        with self.tracer.start_as_current_span(self.span_name, kind=SpanKind.CLIENT, attributes=self.attributes):
            return await super().__call__(keys, args)
