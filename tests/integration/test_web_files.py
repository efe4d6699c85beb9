"""Issue 45: how the page's files and the bare address are served, over real HTTP (uvicorn on a real Redis).
Each file was sent as ``text/html; charset=utf-8; charset=utf-8`` with ``content-disposition: inline;
filename=""``, and ``GET /`` answered a 404 problem instead of leading to the game."""

from __future__ import annotations

import httpx

from pyramide.service.http.web import FILES


def test_every_served_file_has_one_charset_and_no_disposition(live_url: str) -> None:
    assert {"index.html", "app.js", "calendar.js", "messages.json"} <= set(FILES)  # the list is the client's files
    with httpx.Client(base_url=live_url) as http:
        for name in FILES:
            for method in ("GET", "HEAD"):
                response = http.request(method, f"/play/{name}")
                assert response.status_code == 200, (name, method)
                content_type = response.headers["content-type"]
                assert "content-disposition" not in response.headers, (name, response.headers["content-disposition"])
                expected = FILES[name] + ("; charset=utf-8" if FILES[name].startswith("text/") else "")
                assert content_type == expected, (name, content_type)
                assert content_type.count("charset") <= 1, (name, content_type)
            got = http.get(f"/play/{name}")
            assert got.content.startswith(b"<!doctype") == name.endswith(".html")
            again = http.get(f"/play/{name}", headers={"If-None-Match": got.headers["etag"]})
            assert (again.status_code, again.content) == (304, b""), name  # revalidated, not sent again
        page = http.get("/play/")
        assert page.headers["content-type"] == "text/html; charset=utf-8"
        assert "content-disposition" not in page.headers


def test_the_bare_address_leads_to_the_game(live_url: str) -> None:
    with httpx.Client(base_url=live_url) as http:
        for method in ("GET", "HEAD"):
            response = http.request(method, "/")
            assert response.status_code in (302, 308), (method, response.status_code, response.text)
            assert response.headers["location"] == "/play/"
        followed = http.get("/", follow_redirects=True)
        assert followed.status_code == 200 and followed.headers["content-type"] == "text/html; charset=utf-8"
        assert "/" not in http.get("/schema/openapi.json").json()["paths"]
