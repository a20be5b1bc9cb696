"""tali-client: the asyncio client library for the tali protocol (2.x).

    from tali_client import TaliClient, legal, run_bot

The protocol's models (``tali_client.protocol``) are a copy of the server's own
``protocol`` package, made by ``python -m protocol.generate`` and checked current
by CI: the same pydantic classes, except that unknown fields of a newer server
are ignored.
"""

from tali_client.bot import Report, Table, new_entropy, run_bot
from tali_client.client import (
    HELLO_TIMEOUT,
    Backoff,
    Heartbeat,
    HelloTimeout,
    TaliClient,
    TaliError,
)
from tali_client.fair import FairDiceChecker, Verdict, check_hand
from tali_client.legal import Legal, Option, legal
from tali_client.protocol.codec import PROTOCOL_VERSION
from tali_client.scoring import name as roll_name
from tali_client.scoring import rank as roll_rank
from tali_client.tokens import FileTokenStore, MemoryTokenStore, TokenStore

__all__ = [
    "HELLO_TIMEOUT",
    "PROTOCOL_VERSION",
    "Backoff",
    "FairDiceChecker",
    "FileTokenStore",
    "Heartbeat",
    "HelloTimeout",
    "Legal",
    "MemoryTokenStore",
    "Option",
    "Report",
    "Table",
    "TaliClient",
    "TaliError",
    "TokenStore",
    "Verdict",
    "check_hand",
    "legal",
    "new_entropy",
    "roll_name",
    "roll_rank",
    "run_bot",
]
