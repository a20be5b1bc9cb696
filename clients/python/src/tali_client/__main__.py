"""Play some hands with a simple bot: ``python -m tali_client ws://HOST:PORT/``.

It takes the safest legal action each turn (roll, ante, check, call, pass), with
fresh entropy on every roll, checks every hand's dice, and exits 1 if a request
was refused or a hand's dice did not verify.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys

from tali_client.bot import Table, run_bot
from tali_client.legal import Legal, Option

SAFE = ("roll", "ante", "check", "call", "pass", "fold")


def safe(offer: Legal, table: Table) -> Option | None:
    """The first of ``SAFE`` on offer."""
    return next((o for a in SAFE if (o := offer.option(a)) is not None), None)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("url")
    parser.add_argument("--variant", default="liars", choices=["simple", "liars", "draw", "stud"])
    parser.add_argument("--hands", type=int, default=1)
    parser.add_argument(
        "--batch", action="store_true", help="ask for batches (several messages a frame)"
    )
    args = parser.parse_args(argv)
    report = asyncio.run(
        run_bot(args.url, safe, variant=args.variant, hands=args.hands, batch=args.batch)
    )
    print(
        json.dumps(
            {
                "variant": args.variant,
                "hands": report.hands,
                "verified": report.verified,
                "errors": report.errors,
                "failed": len(report.failed),
            }
        )
    )
    ok = report.hands == args.hands and not report.errors and report.verified == report.hands
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
