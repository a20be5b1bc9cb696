"""The ceiling: the least a room must do on this stack, on the same websockets settings.

Each client message is a JSON action naming a room; the server parses it and
sends one event to the room's four members. Same library, same event loop,
same compression (none), same ping settings as the game server. With
``--compression deflate`` it measures what per-message compression costs.

    python -m benchmarks.bare_server --port 9000 [--loop asyncio] [--compression deflate]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import signal

from websockets.asyncio.server import ServerConnection, broadcast, serve

from server.app import loop_factory
from server.runtime.config_edge import EventLoop

rooms: dict[str, list[ServerConnection]] = {}


async def handler(ws: ServerConnection) -> None:
    joined: list[str] = []
    try:
        async for raw in ws:
            message = json.loads(raw)
            room = message["room"]
            if message["type"] == "join":
                rooms.setdefault(room, []).append(ws)
                joined.append(room)
                await ws.send(json.dumps({"type": "joined", "room": room}))
                continue
            frame = json.dumps(
                {"type": "acted", "room": room, "player": message["player"], "n": message["n"]}
            )
            broadcast(rooms.get(room, ()), frame)
    finally:
        for room in joined:
            members = rooms.get(room, [])
            if ws in members:
                members.remove(ws)


async def main(host: str, port: int, compression: str | None) -> None:
    async with serve(
        handler,
        host,
        port,
        compression=compression,
        max_size=64 * 1024,
        ping_interval=20,
        ping_timeout=20,
    ) as server:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)
        port = next(iter(server.sockets)).getsockname()[1]
        print(f"listening {port}", flush=True)
        await stop.wait()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--loop", choices=[e.value for e in EventLoop], default="auto")
    parser.add_argument("--compression", choices=["none", "deflate"], default="none")
    args = parser.parse_args()
    # The game server's own choice of event loop, so that both run on the same one.
    with asyncio.Runner(loop_factory=loop_factory(EventLoop(args.loop))) as runner:
        runner.run(
            main(args.host, args.port, None if args.compression == "none" else args.compression)
        )
