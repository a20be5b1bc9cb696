"""The one HTTP request a connection carries: what is refused, how, and what gets through."""

from __future__ import annotations

from http import HTTPStatus

import pytest

from server.net.budget import address_key
from server.net.http import response
from server.net.httphead import HeadLimits
from server.net.transport import DROP_WAIT, HttpRequest, Limits

from ..transport_fakes import Rig

OK = b"GET /healthz HTTP/1.1\r\nHost: tali.test\r\nUser-Agent: probe\r\nContent-Length: 0\r\n\r\n"
PAGE = b"GET /page.html HTTP/1.1\r\nHost: tali.test\r\n\r\n"


def answer(
    raw: bytes, limits: Limits | None = None, peer: str = "203.0.113.5"
) -> tuple[Rig, bytes]:
    rig = Rig(limits, peer)
    rig.app.answer = lambda request: response(HTTPStatus.OK, b"ok\n")
    rig.conn.data_received(raw)
    return rig, rig.transport.take()


def status(reply: bytes) -> int:
    return int(reply.split(b" ", 2)[1])


def test_a_plain_get_is_answered_once_and_the_connection_closed() -> None:
    rig, reply = answer(OK)
    assert status(reply) == 200
    assert b"\r\nConnection: close\r\n" in reply
    assert reply.endswith(b"\r\n\r\nok\n")
    assert rig.transport.closed
    (request,) = rig.app.requests
    assert (request.method, request.path, request.client, request.upgrade) == (
        "GET",
        "/healthz",
        "203.0.113.5",
        False,
    )


def test_head_gets_the_headers_without_the_body() -> None:
    _, reply = answer(OK.replace(b"GET", b"HEAD", 1))
    assert status(reply) == 200
    assert b"Content-Length: 3\r\n" in reply
    assert reply.endswith(b"\r\n\r\n")


def test_a_path_the_app_does_not_serve_is_404() -> None:
    rig = Rig()
    rig.conn.data_received(OK)
    assert status(rig.transport.take()) == 404


def test_the_query_string_is_apart_from_the_path() -> None:
    rig, _ = answer(b"GET /app.js?v=3 HTTP/1.0\r\n\r\n")
    assert (rig.app.requests[0].path, rig.app.requests[0].query) == ("/app.js", "v=3")


def test_pipelined_requests_get_one_answer_and_are_never_parsed() -> None:
    rig, reply = answer(OK + OK.replace(b"/healthz", b"/metrics") + b"DELETE / HTTP/1.1\r\n\r\n")
    assert reply.count(b"HTTP/1.1") == 1
    assert [r.path for r in rig.app.requests] == ["/healthz"]
    rig.conn.data_received(OK)  # more after the answer: ignored as well
    assert rig.transport.take() == b""


def test_a_request_that_arrives_byte_by_byte_is_answered() -> None:
    rig = Rig()
    rig.app.answer = lambda request: response(HTTPStatus.OK, b"ok\n")
    for i in range(len(OK)):
        rig.conn.data_received(OK[i : i + 1])
    assert status(rig.transport.take()) == 200


@pytest.mark.parametrize(
    ("raw", "code"),
    [
        (b"POST /healthz HTTP/1.1\r\nHost: x\r\n\r\n", 405),
        (b"OPTIONS * HTTP/1.1\r\nHost: x\r\n\r\n", 400),
        (b"PUT / HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc", 405),
        (b"GET / HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc", 400),
        (b"GET / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 400),
        (
            b"GET / HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nTransfer-Encoding: chunked\r\n\r\n",
            400,
        ),
        (b"GET / HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nContent-Length: 0\r\n\r\n", 400),
        (b"GET / HTTP/1.1\r\nHost: x\r\nContent-Length : 0\r\n\r\n", 400),
        (b"GET / HTTP/1.1\r\nHost: x\r\nX-A: 1\r\n folded\r\n\r\n", 400),
        (b"GET / HTTP/1.1\r\nHost: x\r\nX-A: a\x00b\r\n\r\n", 400),
        (b"GET / HTTP/1.1\r\nHost: x\nX-A: 1\r\n\r\n", 400),
        (b"GET / HTTP/1.1\r\n\r\n", 400),
        (b"GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", 400),
        (b"GET http://evil/ HTTP/1.1\r\nHost: x\r\n\r\n", 400),
        (b"GET / HTTP/2.0\r\nHost: x\r\n\r\n", 400),
        (b"GET  / HTTP/1.1\r\nHost: x\r\n\r\n", 400),
        (b"G\xc3\x89T / HTTP/1.1\r\nHost: x\r\n\r\n", 400),
        (b"GET /" + b"a" * 5000 + b" HTTP/1.1\r\nHost: x\r\n\r\n", 414),
        (b"GET /" + b"a" * 5000, 414),  # refused before the line even ends
        (b"GET / HTTP/1.1\r\nHost: x\r\n" + b"X-A: 1\r\n" * 65 + b"\r\n", 431),
        (b"GET / HTTP/1.1\r\nHost: x\r\nX-A: " + b"a" * 17000 + b"\r\n\r\n", 431),
        (b"GET / HTTP/1.1\r\nHost: x\r\nX-A: " + b"a" * 17000, 431),  # before it ends
    ],
)
def test_requests_we_do_not_serve_get_their_status_and_the_connection_closes(
    raw: bytes, code: int
) -> None:
    rig, reply = answer(raw)
    assert status(reply) == code
    assert b"\r\nConnection: close\r\n" in reply
    assert rig.transport.closed
    assert rig.app.requests == []
    assert (b"\r\nAllow: GET, HEAD\r\n" in reply) == (code == 405)


def test_head_limits_are_settings() -> None:
    limits = Limits(head=HeadLimits(max_target=100, max_header_bytes=2000, max_headers=5))
    assert status(answer(b"GET /" + b"a" * 101 + b" HTTP/1.0\r\n\r\n", limits)[1]) == 414
    assert status(answer(b"GET / HTTP/1.0\r\n" + b"A: b\r\n" * 6 + b"\r\n", limits)[1]) == 431
    assert status(answer(b"GET / HTTP/1.0\r\n" + b"A: b\r\n" * 5 + b"\r\n", limits)[1]) == 200


# -- per-address limits ------------------------------------------------------------------


def connect_many(rig: Rig, count: int, peer: str, raw: bytes = PAGE) -> list[Rig]:
    """``count`` more connections from ``peer`` to ``rig``'s server, each sending ``raw``."""
    others = [rig.another(peer) for _ in range(count)]
    for other in others:
        other.conn.data_received(raw)
    return others


def test_beyond_the_open_limit_an_address_gets_429_then_is_dropped_at_once() -> None:
    limits = Limits(max_connections_per_address=2, connection_rate_per_address=0)
    rig = Rig(limits)
    rig.app.answer = lambda request: None
    held = [rig, *connect_many(rig, 1, "203.0.113.5")]
    for conn in held:
        conn.conn.data_received(b"GET /slow HTTP/1.1\r\n")  # still open: no head yet
    refused = connect_many(rig, 2, "203.0.113.5")
    for other in refused:
        reply = other.transport.take()
        assert status(reply) == 429
        assert b"Retry-After: 1" in reply
    # Two open and two refused but not yet gone: the fifth is dropped unanswered.
    (dropped,) = connect_many(rig, 1, "203.0.113.5")
    assert dropped.transport.aborted
    assert dropped.transport.take() == b""
    # Another address is not affected.
    (other,) = connect_many(rig, 1, "198.51.100.7")
    assert status(other.transport.take()) == 404
    assert rig.server.stats["refused"] == 2
    assert rig.server.stats["dropped"] == 1
    for conn in (*refused, dropped):
        conn.conn.connection_lost(None)
    held[0].conn.connection_lost(None)
    (again,) = connect_many(rig, 1, "203.0.113.5")
    assert status(again.transport.take()) == 404


def test_beyond_the_connection_rate_an_address_gets_429() -> None:
    limits = Limits(connection_rate_per_address=1, connection_burst_per_address=3)
    rig = Rig(limits)
    others = connect_many(rig, 4, "203.0.113.5")  # with rig's own: 5 in the same instant
    assert [status(o.transport.take()) for o in others] == [404, 404, 429, 429]
    rig.clock.advance(1.0)
    (later,) = connect_many(rig, 1, "203.0.113.5")
    assert status(later.transport.take()) == 429  # the refused ones were a debt
    rig.clock.advance(3.0)
    (later,) = connect_many(rig, 1, "203.0.113.5")
    assert status(later.transport.take()) == 404


def test_the_address_limits_can_be_turned_off() -> None:
    limits = Limits(address_limits=False, max_connections_per_address=1)
    rig = Rig(limits)
    assert [status(o.transport.take()) for o in connect_many(rig, 50, "203.0.113.5")] == [404] * 50


def test_x_forwarded_for_is_honoured_only_from_the_trusted_proxy() -> None:
    forwarded = OK.replace(b"\r\n\r\n", b"\r\nX-Forwarded-For: 1.1.1.1, 192.0.2.9\r\n\r\n")
    limits = Limits(trusted_proxy="127.0.0.1", max_connections_per_address=1)
    rig, _ = answer(forwarded, limits, peer="127.0.0.1")
    assert rig.app.requests[0].client == "192.0.2.9"  # the hop the proxy saw, not the first
    rig, _ = answer(forwarded, limits, peer="203.0.113.5")
    assert rig.app.requests[0].client == "203.0.113.5"


def test_behind_the_trusted_proxy_each_client_has_its_own_limits() -> None:
    limits = Limits(trusted_proxy="127.0.0.1", max_connections_per_address=1)
    rig = Rig(limits, peer="127.0.0.1")
    rig.app.answer = lambda request: None

    def via_proxy(client: bytes) -> bytes:
        raw = b"GET /slow HTTP/1.1\r\nHost: x\r\nX-Forwarded-For: " + client + b"\r\n\r\n"
        (other,) = connect_many(rig, 1, "127.0.0.1", raw)
        return other.transport.take()

    assert status(via_proxy(b"192.0.2.1")) == 404
    assert status(via_proxy(b"192.0.2.2")) == 404  # answered, but not yet gone
    # The proxy's own connections never count against it.
    assert rig.server.addresses is not None
    assert rig.server.addresses.open("127.0.0.1") == 0
    assert rig.server.addresses.open("192.0.2.2") == 1
    assert status(via_proxy(b"192.0.2.2")) == 429


def test_the_request_seen_by_the_app() -> None:
    rig = Rig()
    seen: list[HttpRequest] = []
    rig.app.answer = lambda request: seen.append(request)  # type: ignore[func-returns-value]
    rig.handshake()
    (request,) = seen
    assert request.upgrade
    assert request.headers["Upgrade"] == "websocket"


def test_probes_are_answered_whatever_the_addresss_limits() -> None:
    """/healthz and /readyz are exempt from every limit: refused (429) or dropped, the
    address's other requests; its probes are answered."""
    limits = Limits(max_connections_per_address=1, connection_rate_per_address=0)
    rig = Rig(limits)
    rig.app.answer = lambda request: response(HTTPStatus.OK, b"ok\n")
    rig.conn.data_received(b"GET /slow HTTP/1.1\r\n")  # holds the one connection allowed
    (refused,) = connect_many(rig, 1, "203.0.113.5")
    assert status(refused.transport.take()) == 429
    probes = [OK, OK.replace(b"/healthz", b"/readyz"), b"HEAD /healthz HTTP/1.0\r\n\r\n"]
    for probe in probes:
        (asked,) = connect_many(rig, 1, "203.0.113.5", probe)
        assert status(asked.transport.take()) == 200
    # Twice the open limit: an address that keeps connecting is dropped unanswered, unless
    # what it asks for is a probe (awaited DROP_WAIT at most).
    assert rig.server.stats["dropped"] >= 1
    (flood,) = connect_many(rig, 1, "203.0.113.5")
    assert flood.transport.aborted
    assert flood.transport.take() == b""
    (probe,) = connect_many(rig, 1, "203.0.113.5", OK)
    assert status(probe.transport.take()) == 200
    silent = rig.another("203.0.113.5")
    rig.clock.advance(DROP_WAIT - 0.1)
    assert not silent.transport.aborted
    rig.clock.advance(0.2)
    assert silent.transport.aborted
    assert [r.path for r in rig.app.requests].count("/page.html") == 0


def test_an_ipv6_client_is_limited_by_its_slash_64() -> None:
    limits = Limits(max_connections_per_address=2, connection_rate_per_address=0)
    rig = Rig(limits, peer="2001:db8:1:2::1")
    rig.app.answer = lambda request: None
    rig.conn.data_received(b"GET /slow HTTP/1.1\r\n")
    connect_many(rig, 1, "2001:db8:1:2:ffff:ffff:ffff:ffff", b"GET /slow HTTP/1.1\r\n")
    (third,) = connect_many(rig, 1, "2001:db8:1:2:abcd::9")
    assert status(third.transport.take()) == 429  # the same /64: its third connection
    (elsewhere,) = connect_many(rig, 1, "2001:db8:1:3::1")
    assert status(elsewhere.transport.take()) == 404
    assert rig.app.requests[-1].client == "2001:db8:1:3::/64"
    narrow = Rig(Limits(ipv6_prefix=128), peer="2001:db8:1:2::1")
    narrow.conn.data_received(PAGE)
    assert narrow.app.requests[0].client == "2001:db8:1:2::1"


@pytest.mark.parametrize(
    ("address", "key"),
    [
        ("203.0.113.5", "203.0.113.5"),
        ("::ffff:203.0.113.5", "203.0.113.5"),
        ("2001:db8::1", "2001:db8::/64"),
        ("2001:DB8:0:0:1::1%eth0", "2001:db8::/64"),
        ("unix-socket", "unix-socket"),
        ("::1", "::/64"),
    ],
)
def test_address_keys(address: str, key: str) -> None:
    assert address_key(address) == key
