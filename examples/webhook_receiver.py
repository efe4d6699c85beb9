"""A webhook endpoint to try the service's events with (docs/quickstart.md), on the standard library alone.

Usage: python3 examples/webhook_receiver.py --secret whsec_... [--port 9000]

Listens on 127.0.0.1, verifies each delivery as Standard Webhooks says (the HMAC-SHA256 of
``<webhook-id>.<webhook-timestamp>.<body>`` under the endpoint's secret, any of the signatures a rotation sends, a
timestamp within five minutes), prints each verified event as one JSON line, answers 204, and refuses (401) one that
does not verify. A real endpoint would also drop a repeated ``webhook-id`` (an event may come twice).
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import hmac
import json
import time
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import Any

TOLERANCE_S = 300


class NotVerifiedError(ValueError):
    """A delivery that does not verify under the secret."""


def verify(secret: str, headers: dict[str, str], body: bytes, now: float | None = None) -> dict[str, Any]:
    """The event of a delivery (``headers`` by lower-case name), once its signature and timestamp verify."""
    key = base64.b64decode(secret.removeprefix("whsec_"))
    event_id, stamp = headers["webhook-id"], headers["webhook-timestamp"]
    if abs((time.time() if now is None else now) - int(stamp)) > TOLERANCE_S:
        raise NotVerifiedError("the timestamp is too far from now")
    signed = f"{event_id}.{stamp}.".encode() + body
    expected = base64.b64encode(hmac.new(key, signed, hashlib.sha256).digest()).decode()
    sent = [part.partition(",")[2] for part in headers["webhook-signature"].split() if part.startswith("v1,")]
    if not any(hmac.compare_digest(expected, signature) for signature in sent):
        raise NotVerifiedError("no signature matches the secret")
    event: dict[str, Any] = json.loads(body)
    return event


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--secret", required=True, help="the endpoint's secret, as createWebhook answered it")
    parser.add_argument("--port", type=int, default=9000)
    args = parser.parse_args()

    class Endpoint(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("content-length", "0")))
            try:
                event = verify(args.secret, {k.lower(): v for k, v in self.headers.items()}, body)
            except (NotVerifiedError, KeyError, ValueError) as error:
                print(json.dumps({"refused": str(error)}), flush=True)
                self.send_response(401)
            else:
                print(json.dumps(event), flush=True)
                self.send_response(204)
            self.end_headers()

        def log_message(self, *_: Any) -> None:
            return

    HTTPServer(("127.0.0.1", args.port), Endpoint).serve_forever()


if __name__ == "__main__":
    main()
