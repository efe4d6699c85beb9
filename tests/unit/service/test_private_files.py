"""The embedded Redis's data directory and its files made the owner's alone (``infra/private_files.py``), on real
files: what was looser is tightened and said, once."""

from __future__ import annotations

import logging
import stat
from pathlib import Path

import pytest

from pyramide.service.infra.private_files import keep_private


def test_the_data_directory_and_its_files_are_made_the_owner_s_alone_and_the_change_logged(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    data = tmp_path / "data"
    assert keep_private(data) == [] and stat.S_IMODE(data.stat().st_mode) == 0o700
    data.chmod(0o755)
    (data / "appendonly.aof").write_bytes(b"")
    (data / "appendonly.aof").chmod(0o644)
    (data / "dump.rdb").write_bytes(b"")
    (data / "dump.rdb").chmod(0o600)
    with caplog.at_level(logging.WARNING, "pyramide.supervisor"):
        changed = keep_private(data)
    assert changed == [f"{data} 0755 -> 0700", "appendonly.aof 0644 -> 0600"]
    assert [r.levelname for r in caplog.records] == ["WARNING"] and changed[1] in caplog.records[0].getMessage()
    modes = {p.name: stat.S_IMODE(p.stat().st_mode) for p in (data, data / "appendonly.aof", data / "dump.rdb")}
    assert modes == {"data": 0o700, "appendonly.aof": 0o600, "dump.rdb": 0o600}
    assert keep_private(data) == []
