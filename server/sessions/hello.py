"""The hello that opens a connection's session: a new one, a resume, or a sign-in.

``hello`` checks the protocol version and the name; alone (one node, no sign-in token)
the session is opened or resumed at once (``_hello_here``), else in a task
(``_hello_later``: sessions are shared over the network, or a sign-in token is
verified), what the client sends meanwhile waiting its turn. A banned account or
address is refused; a session resumed from another connection closes that one
(``SESSION_REPLACED``). The ``welcome`` follows, and on a resume each room's
``snapshot`` (``_welcome``).

The connection (``server.gateway.connection.Connection``) and the server around it
(``server.app``) are above this package: they are seen here through the protocols
below, as much of them as a hello uses.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any, Protocol

from websockets.frames import CloseCode

import protocol.client as req
import protocol.server as msg
from protocol.codec import PROTOCOL_VERSION, supports
from protocol.errors import ERRORS
from protocol.errors import ErrorCode as WireCode
from protocol.types import BATCH, AccountRole
from server.identity.auth import AuthRefused
from server.identity.names import NameRefused, normalise
from server.identity.session import Identity, Outbox, Session
from server.rooms.room_effects import RequestError
from server.rooms.room_views import snapshot_for
from server.sessions.presence import HelloRefused

if TYPE_CHECKING:
    from structlog.typing import FilteringBoundLogger

    from server.identity.auth import Replays, Verifier
    from server.net.transport import Peer
    from server.persistence.store import Data
    from server.rooms.lobby import Lobby
    from server.runtime.config import ServerConfig
    from server.runtime.metrics import Metrics
    from server.sessions.presence import Presence

SERVER_VERSION = "0.1.0"
SESSION_REPLACED = 4001  # private-use close code: the session resumed on another connection


class Sessions(Protocol):
    """Where sessions are opened and found: the cluster (``server.cluster.cluster.Cluster``,
    perhaps of one node)."""

    @property
    def shared(self) -> bool:
        """Whether sessions live beyond this process (a hello then waits on the network)."""

    async def open(
        self, name: str, address: str, outbox: Outbox, identity: Identity | None
    ) -> tuple[Session, str]:
        """A new session, written where every node finds it: it and its token."""

    async def resume(self, token: str, outbox: Outbox) -> tuple[Session, Outbox | None]:
        """The session of ``token``, now live here; the outbox it was live on here, if any
        (``HelloRefused`` if not found, or played elsewhere)."""


class Bans(Protocol):
    """Who is banned (``server.community.moderation.Moderation``)."""

    def banned(self, account: str | None, address: str) -> Data | None:
        """The ban of ``account`` or ``address``, if any."""

    def now_ms(self) -> int:
        """Now, in Unix milliseconds."""


class Accounts(Protocol):
    """Where a signed-in player's account is kept (``server.community.accounts.Records``)."""

    def save_account(self, account: str, name: str, data: Data) -> None:
        """An account's name, and ``data`` merged into what is kept."""


class Flushed(Protocol):
    """The turn's frames (``server.gateway.turn.Outgoing``)."""

    def flush(self) -> None:
        """Write what is queued (once it is durable)."""


class Server(Protocol):
    """What a hello needs of the server around it (``server.app.TaliServer``)."""

    @property
    def presence(self) -> Presence: ...

    @property
    def cluster(self) -> Sessions: ...

    @property
    def verifier(self) -> Verifier | None: ...

    @property
    def replays(self) -> Replays: ...

    @property
    def moderation(self) -> Bans: ...

    @property
    def records(self) -> Accounts: ...

    @property
    def limits(self) -> msg.Limits: ...

    @property
    def lobby(self) -> Lobby: ...

    @property
    def outgoing(self) -> Flushed: ...


class Greeted(Outbox, Protocol):
    """A connection as its hello sees it (``server.gateway.connection.Connection``): the
    outbox its session goes live on."""

    session: Session | None
    batch: bool
    log: FilteringBoundLogger
    hello_task: asyncio.Task[None] | None

    @property
    def app(self) -> Server: ...

    @property
    def peer(self) -> Peer: ...

    @property
    def config(self) -> ServerConfig: ...

    @property
    def metrics(self) -> Metrics: ...

    @property
    def number(self) -> int: ...

    @property
    def closing(self) -> bool: ...

    def reply(self, message: Any, room: str | None = None) -> None: ...

    def error(
        self,
        code: WireCode,
        message: str,
        request_id: int | str | None = None,
        room: str | None = None,
        *,
        closes: bool | None = None,
        url: str | None = None,
    ) -> None: ...

    def close(self, code: int, reason: str) -> None: ...

    def wait_for(self, task: asyncio.Task[Any]) -> None: ...


def hello(connection: Greeted, message: req.Hello) -> None:
    """Answer ``connection``'s hello: at once, or in a task (``hello_task``) the client's
    next messages wait for; ``RequestError`` if it is refused at once."""
    if connection.session is not None:
        raise RequestError(WireCode.BAD_MESSAGE, "hello was already said on this connection")
    if not supports(message.protocol):
        connection.error(
            WireCode.UNSUPPORTED_VERSION,
            f"this server speaks protocol {PROTOCOL_VERSION}; {message.protocol} is not compatible",
            message.id,
        )
        connection.close(CloseCode.POLICY_VIOLATION, "unsupported protocol version")
        return
    name: str | None = None
    if message.token is None:
        if message.auth is None and not connection.config.auth_guests:
            raise RequestError(
                WireCode.AUTH_REQUIRED, "this server plays with signed-in players only"
            )
        if message.auth is not None and connection.app.verifier is None:
            raise RequestError(WireCode.AUTH_INVALID, "this server takes no sign-in tokens")
        try:
            name = (
                f"Player {connection.number}" if message.name is None else normalise(message.name)
            )
        except NameRefused as exc:
            if message.auth is None:
                raise RequestError(WireCode.INVALID_NAME, str(exc)) from None
            name = f"Player {connection.number}"  # the token names the player
    if not connection.app.cluster.shared and (message.token is not None or message.auth is None):
        _welcome(connection, message, *_hello_here(connection, message, name))
        return
    # Several nodes (sessions are shared, found and written over the network), or a
    # sign-in token to check: what the client sends meanwhile waits its turn.
    task = asyncio.get_running_loop().create_task(_hello_later(connection, message, name))
    connection.hello_task = task
    connection.wait_for(task)


def _hello_here(
    connection: Greeted, message: req.Hello, name: str | None
) -> tuple[Session, str, bool]:
    presence = connection.app.presence
    if message.token is None:
        assert name is not None
        _refuse_banned(connection, None)
        return (*presence.open(name, connection.peer.remote_address, connection), False)
    session = presence.local(message.token)
    if session is not None:
        _refuse_banned(connection, session.account, session.address)
    try:
        session, old = presence.resume(message.token, connection)
    except HelloRefused as exc:
        raise RequestError(exc.code, exc.message, exc.url) from None
    _take_over(connection, old)
    return session, message.token, True


def _refuse_banned(connection: Greeted, account: str | None, address: str | None = None) -> None:
    ban = connection.app.moderation.banned(account, address or connection.peer.remote_address)
    if ban is None and address is not None:
        ban = connection.app.moderation.banned(None, connection.peer.remote_address)
    if ban is not None:
        raise RequestError(WireCode.BANNED, f"banned: {ban.get('reason') or 'no reason given'}")


async def _sign_in(connection: Greeted, token: str) -> Identity:
    """The identity a sign-in token stands for, used up (``RequestError`` if refused)."""
    verifier = connection.app.verifier
    assert verifier is not None
    try:
        signed = await verifier.verify(token)
    except AuthRefused as exc:
        raise RequestError(exc.code, exc.message) from None
    if not await connection.app.replays.first_use(signed.jti, signed.expires):
        raise RequestError(WireCode.AUTH_REPLAYED, "this sign-in token was used before")
    identity = signed.identity
    _refuse_banned(connection, identity.account)
    connection.app.records.save_account(
        identity.account,
        identity.name,
        {
            "roles": sorted(identity.roles),
            "first_seen": connection.app.moderation.now_ms(),
            "last_seen": connection.app.moderation.now_ms(),
        },
    )
    return identity


async def _hello_later(connection: Greeted, message: req.Hello, name: str | None) -> None:
    cluster = connection.app.cluster
    try:
        if message.token is None:
            assert name is not None
            identity = await _sign_in(connection, message.auth) if message.auth else None
            if connection.closing:
                return
            address = connection.peer.remote_address
            session, token = await cluster.open(name, address, connection, identity)
            resumed = False
        else:
            found = connection.app.presence.local(message.token)
            if found is not None:
                _refuse_banned(connection, found.account, found.address)
            session, old = await cluster.resume(message.token, connection)
            _refuse_banned(connection, session.account, session.address)
            _take_over(connection, old)
            token, resumed = message.token, True
    except RequestError as exc:
        connection.error(exc.code, exc.message, message.id, url=exc.url)
        if ERRORS[exc.code].closes:
            connection.close(CloseCode.POLICY_VIOLATION, exc.code.value)
    except HelloRefused as exc:
        connection.error(exc.code, exc.message, message.id, url=exc.url)
    except Exception:
        connection.log.exception("hello_failed")
        connection.error(
            WireCode.INTERNAL_ERROR, "the server failed to handle this hello", message.id
        )
    else:
        if connection.closing:
            connection.app.presence.closed(session, connection)
        else:
            _welcome(connection, message, session, token, resumed)
    finally:
        connection.hello_task = None
        connection.app.outgoing.flush()


def _take_over(connection: Greeted, old: Outbox | None) -> None:
    # ``old`` is a connection like this one (a ``Connection``), or no connection at all.
    if isinstance(old, type(connection)) and old is not connection:
        old.session = None
        old.close(SESSION_REPLACED, "session resumed on another connection")


def _welcome(
    connection: Greeted, message: req.Hello, session: Session, token: str, resumed: bool
) -> None:
    if resumed:
        connection.metrics.reconnects.inc()
    connection.session = session
    connection.log = connection.log.bind(player=session.player_id)
    connection.log.info("hello", resumed=resumed)
    granted = [BATCH] if message.capabilities and BATCH in message.capabilities else []
    # From the welcome on: it may share a frame with the snapshots after it.
    connection.batch = bool(granted)
    connection.reply(
        msg.Welcome(
            type="welcome",
            id=message.id,
            server_version=SERVER_VERSION,
            protocol=PROTOCOL_VERSION,
            player_id=session.player_id,
            name=session.name,
            token=token,
            resumed=resumed,
            rooms=list(session.rooms),
            limits=connection.app.limits,
            account=session.account,
            roles=[AccountRole(role) for role in sorted(session.roles)],
            capabilities=granted,
        )
    )
    if resumed:
        for room_id in list(session.rooms):
            room = connection.app.lobby.rooms.get(room_id)
            if room is not None:
                room.reconnected(session)
                connection.reply(snapshot_for(room, session), room_id)
