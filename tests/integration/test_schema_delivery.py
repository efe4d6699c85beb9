"""The served schema has an ETag and is compressed for a client that takes gzip (issue 59): over a megabyte was sent
whole, uncompressed and without a validator on every request."""

from __future__ import annotations

import gzip
import json
from typing import Any

from litestar.testing import TestClient

SCHEMA = "/schema/openapi.json"


def test_the_schema_is_sent_gzipped_with_an_etag_and_304_while_it_holds(client: TestClient[Any]) -> None:
    plain = client.get(SCHEMA, headers={"Accept-Encoding": "identity"})
    assert plain.status_code == 200 and "content-encoding" not in plain.headers
    document = json.loads(plain.content)
    assert document["openapi"].startswith("3.1")
    etag = plain.headers["ETag"]
    raw = client.stream("GET", SCHEMA, headers={"Accept-Encoding": "gzip"})
    with raw as response:
        packed = b"".join(response.iter_raw())
        assert response.headers["content-encoding"] == "gzip" and response.headers["ETag"] == etag
        assert "Accept-Encoding" in response.headers["vary"]
    assert json.loads(gzip.decompress(packed)) == document
    assert len(packed) * 5 < len(plain.content), (len(packed), len(plain.content))
    again = client.get(SCHEMA, headers={"If-None-Match": etag})
    assert again.status_code == 304 and again.content == b"" and again.headers["ETag"] == etag
    assert client.get(SCHEMA, headers={"If-None-Match": '"other"'}).status_code == 200
    yaml = client.get("/schema/openapi.yaml", headers={"Accept-Encoding": "identity"})
    assert yaml.status_code == 200 and yaml.headers["ETag"] != etag
    page = client.get("/schema")
    assert page.status_code == 200 and "ETag" not in page.headers, "the page itself is not one of the documents"
