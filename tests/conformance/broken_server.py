"""The real server with one deliberate defect, for the conformance kit to catch.

    python -m tests.conformance.broken_server FAULT     (settings as for python -m server)

FAULT is one of:
- ``leak``: a liars' hidden roll goes to everyone as the roller's own dice_rolled;
- ``seq``: a chat event takes no seq of its own (it repeats the last one);
- ``error-code``: acting out of turn is refused as illegal_action, not not_your_turn.
"""

from __future__ import annotations

import sys
from typing import Any

from protocol.errors import ErrorCode as WireCode
from server import app
from server.engine.errors import ErrorCode as EngineCode
from server.net import wire
from server.rooms.stream import RoomStream


def leak() -> None:
    def publish_private(
        self: RoomStream, owner: str, private: dict[str, Any], public: dict[str, Any]
    ) -> None:
        self.publish(private)

    RoomStream.publish_private = publish_private  # type: ignore[method-assign]


def seq() -> None:
    original = wire.chat

    def chat(room: str, seq: int, player: str, name: str, text: str) -> dict[str, Any]:
        return original(room, max(1, seq - 1), player, name, text)

    wire.chat = chat


def error_code() -> None:
    wire.ENGINE_ERRORS[EngineCode.NOT_YOUR_TURN] = WireCode.ILLEGAL_ACTION


FAULTS = {"leak": leak, "seq": seq, "error-code": error_code}

if __name__ == "__main__":
    FAULTS[sys.argv.pop(1)]()
    app.main()
