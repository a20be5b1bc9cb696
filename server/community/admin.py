"""The operator's API and page, on the game port under ``/admin``.

``/admin/`` serves a small page (``server/admin_page/``: HTML, a script and a
stylesheet, no secret in them) that asks for the token and then shows and acts
through the API. The API, ``/admin/api/...``, answers JSON and only to a
request that carries ``Authorization: Bearer <token>``: the ``admin_token``
setting, or a sign-in token of an account with the ``admin`` role (checked as
at hello, but not used up). Without either setting the API is not there (404);
a wrong or missing token gets 401, and an address's failed attempts draw on the
HTTP budget (a guesser is slowed to ``http_rate_per_second``).

======  =====================================  ==========================================
method  path                                   what
======  =====================================  ==========================================
GET     /admin/api/rooms                       live rooms: players, stacks, hand, pot
GET     /admin/api/players                     players: connected, where, since
GET     /admin/api/nodes                       nodes, their rooms and leases
GET     /admin/api/moderation?limit=N          the moderation log, newest first
GET     /admin/api/bans                        bans in force
GET     /admin/api/leaderboard?variant=V       a variant's leaderboard
POST    /admin/api/rooms/{room}/close?reason=  close a room
POST    /admin/api/rooms/{room}/kick?player=   kick a player (&reason=)
POST    /admin/api/notice?text=                a notice to everyone connected
POST    /admin/api/nodes/{node}/drain?on=      drain a node (on=false: stop); ``self``
POST    /admin/api/bans?scope=&value=&seconds= ban an account or address (&reason=)
POST    /admin/api/bans/{id}/lift              lift a ban
POST    /admin/api/accounts/{account}/delete   erase an account's data
======  =====================================  ==========================================

POST requests carry their arguments in the query string and no body. A room's
view is public: never a hidden die.
"""

from __future__ import annotations

import asyncio
import json
import secrets
from collections.abc import Awaitable, Callable
from http import HTTPStatus
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, unquote

from websockets.http11 import Response

from protocol.types import BanScope, Variant
from server.community.operator import OperatorError
from server.community.ratings import entry
from server.identity.auth import AuthRefused, Verifier, bearer
from server.net.budget import Buckets, Now
from server.net.http import response
from server.net.static import CONTENT_TYPES, SECURITY_HEADERS
from server.runtime.logs import get_logger

if TYPE_CHECKING:
    from server.community.accounts import Records
    from server.community.operator import Operator
    from server.net.transport import HttpRequest
    from server.runtime.config import ServerConfig

ADMIN = "/admin"
ADMIN_API = "/admin/api/"
PAGE = Path(__file__).resolve().parents[1] / "admin_page"
JSON = "application/json"
NO_STORE = (("Cache-Control", "no-store"), *SECURITY_HEADERS)


class Admin:
    """Answers every request under ``/admin``."""

    def __init__(
        self,
        config: ServerConfig,
        operator: Operator,
        records: Records,
        verifier: Verifier | None,
        clock: Now,
    ) -> None:
        self.config = config
        self.operator = operator
        self.records = records
        self.verifier = verifier
        self._token = (
            config.admin_token.get_secret_value() if config.admin_token is not None else None
        )
        self._failures = Buckets(config.http_rate_per_second, config.http_rate_burst, clock)
        self.log = get_logger()

    @property
    def enabled(self) -> bool:
        return self._token is not None or self.verifier is not None

    def answer(self, request: HttpRequest) -> Response | asyncio.Future[Response]:
        path = request.path
        if not path.startswith(ADMIN_API):
            return _page(path)
        if not self.enabled:
            return response(HTTPStatus.NOT_FOUND, b"not found\n")
        if self._failures.take(request.client, 0.0) < 0:
            return _json(HTTPStatus.TOO_MANY_REQUESTS, {"error": "too many failed attempts"})
        return asyncio.ensure_future(self._api(request))

    async def _api(self, request: HttpRequest) -> Response:
        if not await self._authorised(request):
            self._failures.take(request.client, 1.0)
            return _json(
                HTTPStatus.UNAUTHORIZED,
                {"error": "a bearer token is required"},
                (("WWW-Authenticate", 'Bearer realm="tali operator"'),),
            )
        parts = [unquote(p) for p in request.path[len(ADMIN_API) :].split("/") if p]
        query = {k: v[-1] for k, v in parse_qs(request.query, keep_blank_values=True).items()}
        try:
            handler = self._route(request.method, parts)
            if handler is None:
                return _json(HTTPStatus.NOT_FOUND, {"error": "no such operator request"})
            result = await handler(parts, query)
        except OperatorError as exc:
            return _json(HTTPStatus(exc.status), {"error": exc.message, "code": exc.code})
        except (KeyError, ValueError) as exc:
            return _json(HTTPStatus.BAD_REQUEST, {"error": f"bad request: {exc}"})
        if request.method == "POST":
            self.log.info("operator_act", path=request.path, client=request.client)
        return _json(HTTPStatus.OK, result)

    async def _authorised(self, request: HttpRequest) -> bool:
        token = bearer(request.headers.get("Authorization"))
        if token is None:
            return False
        if self._token is not None and secrets.compare_digest(token, self._token):
            return True
        if self.verifier is None or token.count(".") != 2:
            return False
        try:
            signed = await self.verifier.verify(token)
        except AuthRefused:
            return False
        return "admin" in signed.identity.roles

    def _route(
        self, method: str, parts: list[str]
    ) -> Callable[[list[str], dict[str, str]], Awaitable[Any]] | None:
        operator = self.operator
        reading = method in ("GET", "HEAD")
        match parts:
            case ["rooms"] if reading:
                return lambda p, q: operator.rooms()
            case ["players"] if reading:
                return lambda p, q: operator.players()
            case ["nodes"] if reading:
                return lambda p, q: operator.nodes()
            case ["moderation"] if reading:
                return lambda p, q: self.records.moderation(min(500, int(q.get("limit", 100))))
            case ["bans"] if reading:
                return lambda p, q: _bans(operator)
            case ["leaderboard"] if reading:
                return self._leaderboard
            case ["rooms", _, "close"] if method == "POST":
                return lambda p, q: _done(operator.close_room(p[1], q.get("reason", "")[:200]))
            case ["rooms", _, "kick"] if method == "POST":
                return lambda p, q: _done(
                    operator.kick(p[1], q["player"], q.get("reason", "")[:200])
                )
            case ["notice"] if method == "POST":
                return self._notice
            case ["nodes", _, "drain"] if method == "POST":
                return lambda p, q: operator.drain(
                    None if p[1] == "self" else p[1], q.get("on", "true") != "false"
                )
            case ["bans"] if method == "POST":
                return self._ban
            case ["bans", _, "lift"] if method == "POST":
                return lambda p, q: _lifted(operator, p[1])
            case ["accounts", _, "delete"] if method == "POST":
                return lambda p, q: operator.delete_account(p[1])
        return None

    async def _leaderboard(self, parts: list[str], query: dict[str, str]) -> Any:
        variant = Variant(query.get("variant", "liars")).value
        standings = await self.records.leaderboard(
            variant, min(100, int(query.get("limit", 20))), 0
        )
        return [entry(s).model_dump(mode="json") for s in standings]

    async def _notice(self, parts: list[str], query: dict[str, str]) -> Any:
        text = query["text"].strip()
        if not 1 <= len(text) <= 500 or any(ord(c) < 32 and c not in "\t\n" for c in text):
            raise ValueError("text: 1..500 characters, no control characters")
        return {"told": await self.operator.notice(text)}

    async def _ban(self, parts: list[str], query: dict[str, str]) -> Any:
        seconds = float(query["seconds"])
        if not 60 <= seconds <= 31_536_000:
            raise ValueError("seconds: 60..31536000")
        value = query["value"].strip()
        if not value:
            raise ValueError("value: an account or an address")
        return await self.operator.ban(
            BanScope(query.get("scope", "account")), value, seconds, query.get("reason", "")[:200]
        )


async def _done(work: Awaitable[None]) -> Any:
    await work
    return {"done": True}


async def _bans(operator: Operator) -> Any:
    return sorted(operator.local.moderation.bans.by_id.values(), key=lambda b: b["until"])


async def _lifted(operator: Operator, ban_id: str) -> Any:
    ban = await operator.lift(ban_id)
    if ban is None:
        raise OperatorError(404, f"no ban {ban_id!r} in force")
    return ban


def _json(status: HTTPStatus, data: Any, extra: tuple[tuple[str, str], ...] = ()) -> Response:
    body = json.dumps(data, separators=(",", ":")).encode()
    return response(status, body, JSON, (*NO_STORE, *extra))


def _page(path: str) -> Response:
    """The operator's page: its three files, nothing else."""
    name = path[len(ADMIN) :].lstrip("/") or "index.html"
    if name not in ("index.html", "admin.js", "admin.css"):
        return response(HTTPStatus.NOT_FOUND, b"not found\n")
    file = PAGE / name
    return response(
        HTTPStatus.OK, file.read_bytes(), CONTENT_TYPES[file.suffix], (*NO_STORE, *SECURITY_HEADERS)
    )
