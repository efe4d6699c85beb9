"""The ``pyramide`` command.

``pyramide deal [CODE] [--rules RULES] [--layout FILE] [--json]`` prints a deal: the code's, a layout file's (the
JSON that ``--json`` prints), or a random one under RULES (a segment such as ``2S`` or rules JSON).

``pyramide serve [--host 127.0.0.1] [--port 8000] [--data-dir DIR] [--workers N|auto]`` runs the game service;
without ``REDIS_URL`` it starts, supervises and on exit stops the embedded Redis with its files under DIR
(``PYRAMIDE_DATA_DIR``, default ``./data``), shared by the N worker processes (``PYRAMIDE_WORKERS``, default 1).

``pyramide solve [CODE] [--rules RULES] [--layout FILE] [--shortest] [--budget N] [--json]`` analyses a deal:
whether it can be won, the most pyramid cards any line removes, and a line that does it.

``pyramide backup FILE [--data-dir DIR]`` and ``pyramide restore FILE [--data-dir DIR]`` copy the embedded Redis's
data to a snapshot and back (``service/backup.py``).

``pyramide verify-challenge ID [--url URL]`` checks a closed daily challenge's proof: SHA-256 of its code and nonce
equals the commitment it published before its day (``service/challenges/verify.py``); exit 1 with the reason if not.

``pyramide verify FILE [--jwks URL|FILE]`` checks a result certificate (the compact JWS, or getGameCertificate's
JSON; ``-`` reads it from standard input) against the service's public keys and replays its record from the deal
code: exit 0 and what it proves, or exit 1 and why not (``docs/certificates.md``).

``pyramide openapi [--check]`` writes the app's OpenAPI schema to ``openapi/openapi.json`` (or checks it).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from pyramide.engine import DealCode, Game, InvalidInputError, Rules, random_deal_code
from pyramide.engine.cards import Card, card_code
from pyramide.engine.moves import format_record
from pyramide.engine.pyramid import ROWS
from pyramide.solver import solve

EXIT_BAD_SETTINGS = 2
"""`pyramide serve` with a setting it does not know or cannot take."""

_SYMBOLS = {"C": "♣", "D": "♦", "H": "♥", "S": "♠"}


def _label(card: Card) -> str:
    code = card_code(card)
    return code[:-1] + _SYMBOLS[code[-1]]


def _rules(text: str) -> Rules:
    stripped = text.strip()
    return Rules.from_json(json.loads(stripped)) if stripped.startswith("{") else Rules.from_segment(stripped)


def _describe(rules: Rules) -> str:
    parts = ["unlimited turn-overs" if rules.recycles is None else f"{rules.recycles} turn-overs"]
    parts.append("relaxed win" if not rules.strict_win else "strict win")
    if rules.stock_waste_pairs:
        parts.append("stock–waste pairs")
    if rules.cover_pairs:
        parts.append("pairs with the covering card")
    return ", ".join(parts)


def render_deal(code: DealCode) -> str:
    """The deal as a person reads it: the pyramid drawn row by row, then the waste and the stock."""
    layout = code.deal()
    width = 4
    lines = [f"{code}  ({code.rules.segment}: {_describe(code.rules)})", ""]
    for row in range(ROWS):
        cards = "".join(_label(c).center(width) for c in layout.row(row))
        lines.append((" " * (width // 2) * (ROWS - 1 - row) + cards).rstrip())
    lines.append("")
    lines.append("Waste (bottom to top): " + " ".join(_label(c) for c in layout.waste))
    lines.append(f"Stock ({len(layout.stock)}, next first): " + " ".join(_label(c) for c in layout.stock))
    return "\n".join(lines)


def _deal(args: argparse.Namespace) -> DealCode:
    if args.layout is not None:
        data = json.loads(Path(args.layout).read_text(encoding="utf-8"))
        if args.rules is not None:
            data["rules"] = _rules(args.rules).to_json()
        return DealCode.from_json(data)
    rules = None if args.rules is None else _rules(args.rules)
    if args.code is None:
        return random_deal_code(rules or Rules())
    code = DealCode.parse(args.code)
    return code if rules is None else DealCode(rules, code.number, code.layout)


def _solve(code: DealCode, args: argparse.Namespace) -> int:
    analysis = solve(Game(code), budget=args.budget, shortest=args.shortest)
    if args.json:
        print(json.dumps({"code": str(code), **analysis.to_json()}))
        return 0
    verdict = {True: "winnable", False: "not winnable", None: "unknown (budget ran out)"}[analysis.winnable]
    most = analysis.max_removable if analysis.max_removable is not None else f">= {analysis.best_found}"
    print(f"{code}: {verdict}; at most {most} pyramid cards removable")
    print(f"line ({len(analysis.line)} moves): {format_record(analysis.line)}")
    if analysis.shortest is not None:
        print(f"shortest win ({len(analysis.shortest)} moves): {format_record(analysis.shortest)}")
    print(f"{analysis.states} positions in {analysis.elapsed_ms:.1f} ms")
    return 0


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="pyramide", description="Pyramide solitaire")
    commands = parser.add_subparsers(dest="command", required=True)
    deal = commands.add_parser("deal", help="print a deal: a code's, a layout file's or a random one")
    deal.add_argument("code", nargs="?", help="a deal code such as PY1-N-AAAAAAS (random when left out)")
    deal.add_argument("--rules", help="a rule-set segment (N, 2S, 0CW …) or rules JSON; overrides the code's")
    deal.add_argument("--layout", metavar="FILE", help="a layout as JSON, as --json prints it")
    deal.add_argument("--json", action="store_true", help="print JSON instead of a drawing")
    serve = commands.add_parser("serve", help="run the game service (with the embedded Redis unless REDIS_URL)")
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=int, default=8000)
    serve.add_argument("--data-dir", help="where the embedded Redis keeps its files (default: ./data)")
    serve.add_argument("--workers", help="HTTP worker processes: a number or `auto`, one per usable CPU (default: 1)")
    solve = commands.add_parser("solve", help="can the deal be won, how many cards at most, and how")
    solve.add_argument("code", nargs="?", help="a deal code (random when left out)")
    solve.add_argument("--rules", help="a rule-set segment or rules JSON; overrides the code's")
    solve.add_argument("--layout", metavar="FILE", help="a layout as JSON, as `deal --json` prints it")
    solve.add_argument("--shortest", action="store_true", help="also find a winning line with the fewest moves")
    solve.add_argument("--budget", type=int, default=2_000_000, help="positions to explore at most")
    solve.add_argument("--json", action="store_true", help="print JSON")
    for name, text in (("backup", "write a snapshot of the data to FILE"), ("restore", "make DIR hold FILE's data")):
        command = commands.add_parser(name, help=text)
        command.add_argument("file", help="the snapshot (an RDB file)")
        command.add_argument("--data-dir", default=None, help="the embedded Redis's directory (default: ./data)")
    challenge = commands.add_parser("verify-challenge", help="check a closed challenge's deal against its commitment")
    challenge.add_argument("challenge", help="the challenge's id, e.g. 2026-12-01-N")
    challenge.add_argument("--url", default=None, help="the service's base URL (default: http://127.0.0.1:8000)")
    verify = commands.add_parser("verify", help="check a result certificate's signature and replay its record")
    verify.add_argument("file", help="the certificate (the JWS or getGameCertificate's JSON); - for stdin")
    verify.add_argument("--jwks", help="the public keys: a URL or a JWK Set file (default: a local service's)")
    schema = commands.add_parser("openapi", help="write openapi/openapi.json from the app")
    schema.add_argument("--check", action="store_true", help="only check that the committed file is current")
    return parser


def _backup(args: argparse.Namespace) -> int:
    from pyramide.service.infra.backup import BackupError, backup, restore  # noqa: PLC0415 - as `serve`

    data_dir = Path(args.data_dir or os.environ.get("PYRAMIDE_DATA_DIR", "data"))
    server = os.environ.get("PYRAMIDE_REDIS_SERVER") or None  # as the settings read it (EmbeddedRedis.server)
    binary = None if server is None else Path(server)
    try:
        if args.command == "backup":
            keys = backup(data_dir, Path(args.file), binary)
            print(f"wrote {args.file}: {keys} keys from {data_dir}")
        else:
            keys = restore(Path(args.file), data_dir, binary)
            print(f"restored {keys} keys from {args.file} into {data_dir}")
    except (BackupError, OSError) as error:
        print(f"pyramide {args.command}: {error}", file=sys.stderr)
        return 1
    return 0


def _verify_challenge(args: argparse.Namespace) -> int:
    from pyramide.service.challenges.verify import DEFAULT_URL, NotVerifiedError, verify_challenge  # noqa: PLC0415

    try:
        print(verify_challenge(args.url or DEFAULT_URL, args.challenge))
    except NotVerifiedError as error:
        print(f"pyramide verify-challenge: NOT verified: {error}", file=sys.stderr)
        return 1
    return 0


def _verify(args: argparse.Namespace) -> int:
    """Exit 0 with what the certificate proves; 1 with why it does not hold; 2 when it cannot be read."""
    from pyramide.verification import DEFAULT_JWKS, CertificateError, load_jwks, read_certificate, verify  # noqa: PLC0415

    try:
        text = sys.stdin.read() if args.file == "-" else Path(args.file).read_text(encoding="utf-8")
        token = read_certificate(text)
        jwks = load_jwks(args.jwks or DEFAULT_JWKS)
    except (OSError, UnicodeDecodeError, CertificateError) as error:
        print(f"pyramide verify: {error}", file=sys.stderr)
        return 2
    try:
        verified = verify(token, jwks)
    except CertificateError as error:
        print(f"pyramide verify: invalid: {error}", file=sys.stderr)
        return 1
    print(verified.describe())
    return 0


def _serve(args: argparse.Namespace) -> int:
    """`pyramide serve`: the settings are checked before the web stack is imported, so that a bad one is refused
    (exit 2, one line per setting) in the time the settings take to load, not the whole service's (2.1 -> 0.5 s)."""
    from pydantic import ValidationError  # noqa: PLC0415 - `deal` must not load the service

    from pyramide.service.infra.settings import Settings, settings_errors, unknown_variables  # noqa: PLC0415

    unknown = unknown_variables(os.environ)
    for line in unknown:
        print(f"pyramide serve: unknown setting: {line}", file=sys.stderr)
    if unknown:
        return EXIT_BAD_SETTINGS
    embedded = {} if args.data_dir is None else {"data_dir": args.data_dir}
    http = {} if args.workers is None else {"workers": args.workers}
    try:
        settings = Settings(embedded=embedded, http=http)
    except ValidationError as error:
        for line in settings_errors(error):
            print(f"pyramide serve: invalid setting: {line}", file=sys.stderr)
        return EXIT_BAD_SETTINGS
    from pyramide.service.infra.tracing import check_exporters  # noqa: PLC0415 - loads OpenTelemetry's SDK

    problem = check_exporters()  # OTEL_* are OpenTelemetry's variables, not ours: only what would fail is refused
    if problem is not None:
        print(f"pyramide serve: invalid setting: {problem}", file=sys.stderr)
        return EXIT_BAD_SETTINGS
    from pyramide.service.serve import serve  # noqa: PLC0415 - the web stack, once the settings are good

    return serve(settings, args.host, args.port)


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.command == "verify":
        return _verify(args)
    if args.command == "serve":
        return _serve(args)
    if args.command in ("backup", "restore"):
        return _backup(args)
    if args.command == "verify-challenge":
        return _verify_challenge(args)
    if args.command == "openapi":
        from pyramide.service.serve import write_openapi  # noqa: PLC0415 - as above

        return write_openapi(check=args.check)
    try:
        code = _deal(args)
    except (InvalidInputError, OSError, json.JSONDecodeError) as error:
        print(f"pyramide: {error}", file=sys.stderr)
        return 2
    if args.command == "solve":
        return _solve(code, args)
    if args.json:
        print(json.dumps(code.to_json(), ensure_ascii=False))
    else:
        print(render_deal(code))
    return 0


if __name__ == "__main__":
    sys.exit(main())
