"""The service's Redis connections send exactly the bytes redis-py's own connections send."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from redis.asyncio.connection import Connection
from redis.exceptions import DataError

from pyramide.service.infra.redis import LeanCommands


class _Lean(LeanCommands, Connection):
    pass


ARGUMENTS = st.one_of(
    st.binary(max_size=300), st.text(max_size=100), st.integers(), st.floats(allow_nan=False, allow_infinity=False)
)


@given(st.sampled_from(["EVALSHA", "GET", "SET", "SCRIPT LOAD", b"CLIENT SETINFO"]), st.lists(ARGUMENTS, max_size=12))
def test_commands_are_packed_as_redis_py_packs_them(name: str | bytes, arguments: list[Any]) -> None:
    lean, plain = _Lean(), Connection()
    assert b"".join(lean.pack_command(name, *arguments)) == b"".join(plain.pack_command(name, *arguments))


def test_values_redis_cannot_store_are_refused_as_redis_py_refuses_them() -> None:
    refused: list[Any] = [None, True, [1], {"a": 1}]
    for value in refused:
        with pytest.raises(DataError):
            _Lean().pack_command("SET", "key", value)
        with pytest.raises(DataError):
            Connection().pack_command("SET", "key", value)
