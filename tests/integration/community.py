"""Helpers of the community tests: the operator's API over HTTP, signed-in players."""

from __future__ import annotations

import asyncio
import json
import urllib.error
import urllib.parse
import urllib.request
from typing import Any

from protocol.codec import PROTOCOL_VERSION

from .harness import Client, Listening, open_client

ADMIN_TOKEN = "operator-token-0123456789abcdef"


async def api(
    port: int, method: str, path: str, token: str | None = ADMIN_TOKEN, **query: Any
) -> tuple[int, Any]:
    """One request to the operator's API: its status and its JSON (or text)."""
    header = None if token is None else f"Bearer {token}"
    return await raw_api(port, method, path, header, **query)


async def raw_api(
    port: int, method: str, path: str, authorization: str | None, **query: Any
) -> tuple[int, Any]:
    """One request with ``authorization`` as its Authorization header (or none)."""
    target = f"http://127.0.0.1:{port}{path}"
    if query:
        target += "?" + urllib.parse.urlencode(query)

    def fetch() -> tuple[int, Any]:
        request = urllib.request.Request(target, method=method)
        if authorization is not None:
            request.add_header("Authorization", authorization)
        try:
            with urllib.request.urlopen(request, timeout=10) as reply:
                body = reply.read().decode()
                status = reply.status
        except urllib.error.HTTPError as error:
            body, status = error.read().decode(), error.code
        try:
            return status, json.loads(body)
        except ValueError:
            return status, body

    return await asyncio.to_thread(fetch)


async def signed_in(server: Listening, auth: str, label: str = "signed-in") -> tuple[Client, Any]:
    """A connection that says hello with a sign-in token: it and the reply."""
    client = await open_client(server, label)
    reply = await client.request("hello", protocol=PROTOCOL_VERSION, auth=auth)
    if reply["type"] == "welcome":
        client.player_id, client.token = reply["player_id"], reply["token"]
    return client, reply
