"""Command line: ``server URL`` certifies a server; ``client -- COMMAND`` checks a client.

Exit status 0 when every check passed (skips allowed), 1 otherwise.
"""

from __future__ import annotations

import argparse
import asyncio
import sys

from tali_conformance import client_checks, server_checks
from tali_conformance.client_checks import SCENARIOS, ClientKit
from tali_conformance.report import Report
from tali_conformance.server_checks import ServerKit


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tali_conformance", description=__doc__)
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.add_argument(
        "--patience",
        "--timeout",
        type=float,
        metavar="SECONDS",
        help="how long to wait for what a conforming server or client does at once (a reply,"
        " a resync, a reconnect): 5 s for a server, 10 s for a client unless given",
    )
    sub = parser.add_subparsers(dest="subject", required=True)
    server = sub.add_parser("server", help="certify the server at URL")
    server.add_argument("url")
    server.add_argument(
        "--skip",
        action="append",
        default=[],
        choices=[short for short, _, _ in ServerKit("").scenarios()],
        help="leave a scenario out (repeatable); what only it covers is reported as skipped",
    )
    server.add_argument(
        "--auth-secret",
        help="the server's HS256 sign-in secret: the kit signs tokens to provoke every sign-in"
        " outcome and a moderator's ban (without it, those are skipped)",
    )
    server.add_argument("--auth-issuer", help="the iss the server's sign-in expects")
    server.add_argument("--auth-audience", help="the aud the server's sign-in expects")
    client = sub.add_parser(
        "client",
        help="run COMMAND (a client's adapter, see the README) against a scripted server",
    )
    client.add_argument(
        "--only",
        action="append",
        default=[],
        choices=[short for short, _, _ in SCENARIOS],
        help="run only this scenario (repeatable): a partial run, which certifies nothing",
    )
    client.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)
    report: Report
    if args.subject == "server":
        kit = ServerKit(
            args.url,
            server_checks.PATIENCE if args.patience is None else args.patience,
            auth_secret=args.auth_secret,
            auth_issuer=args.auth_issuer,
            auth_audience=args.auth_audience,
        )
        report = asyncio.run(kit.run(frozenset(args.skip)))
    else:
        command = (
            [c for c in args.command if c != "--"] if args.command[:1] == ["--"] else args.command
        )
        if not command:
            parser.error("client: give the adapter's command after --")
        patience = client_checks.PATIENCE if args.patience is None else args.patience
        report = asyncio.run(ClientKit(command, patience).run(frozenset(args.only)))
    print(report.json() if args.json else report.text())
    return 0 if report.ok else 1


if __name__ == "__main__":
    sys.exit(main())
