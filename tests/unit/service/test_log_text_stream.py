"""A request's log line written where the root handler writes, even when that is a text stream with no binary
buffer (a test's ``StringIO``): the line is written, the request is not failed (a run whose root handler was such a
stream answered every request 500)."""

from __future__ import annotations

import io
import json
import logging

import pytest

from pyramide.service.infra import logs


def test_a_text_stream_root_handler_gets_the_line_as_text(monkeypatch: pytest.MonkeyPatch) -> None:
    text = io.StringIO()
    handler = logging.StreamHandler(text)
    monkeypatch.setattr(logging.getLogger(), "handlers", [handler])
    logs._stream().write(json.dumps({"message": "GET /v1/rules 200"}).encode() + b"\n")
    assert json.loads(text.getvalue())["message"] == "GET /v1/rules 200"
