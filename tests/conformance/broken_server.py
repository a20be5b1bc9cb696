"""The real server with one deliberate defect, for the conformance kit to catch.

    python -m tests.conformance.broken_server FAULT     (settings as for python -m server)

FAULT is one of:
- ``leak``: a liars' hidden roll goes to everyone as the roller's own dice_rolled;
- ``seq``: a chat event takes no seq of its own (it repeats the last one);
- ``error-code``: acting out of turn is refused as illegal_action, not not_your_turn;
- ``batch-of-one``: a client that asked for batches gets a lone message as an array of
  one (a batch is two or more).
"""

from __future__ import annotations

import sys
from typing import Any

from protocol.errors import ErrorCode as WireCode
from server import app
from server.engine.errors import ErrorCode as EngineCode
from server.gateway import turn
from server.net import wire
from server.net.frames import Out, payload_frame
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


def batch_of_one() -> None:
    original = turn.batch_frame

    def batch_frame(messages: list[Out | bytes]) -> bytes:
        only = messages[0]
        if len(messages) == 1 and isinstance(only, Out):
            return payload_frame(b"[%b]" % only.payload())
        return original(messages)

    turn.batch_frame = batch_frame


FAULTS = {"leak": leak, "seq": seq, "error-code": error_code, "batch-of-one": batch_of_one}

if __name__ == "__main__":
    FAULTS[sys.argv.pop(1)]()
    app.main()
