"""The transport without a socket: bytes in through a fake transport, time on a fake clock."""

from __future__ import annotations

from http import HTTPStatus

import pytest
from websockets.frames import CloseCode, Frame, Opcode
from websockets.protocol import State

from server.net.http import response
from server.net.transport import FEED_CHUNK, Limits

from ..transport_fakes import Rig, close_of, masked

PING, PONG, TEXT, BINARY, CONT, CLOSE = (
    Opcode.PING,
    Opcode.PONG,
    Opcode.TEXT,
    Opcode.BINARY,
    Opcode.CONT,
    Opcode.CLOSE,
)


def opened(limits: Limits | None = None) -> Rig:
    rig = Rig(limits)
    response = rig.handshake()
    assert response.status_code == 101
    return rig


def server_frame(text: str) -> bytes:
    return Frame(TEXT, text.encode()).serialize(mask=False)


# -- opening --------------------------------------------------------------------------


def test_the_handshake_opens_the_websocket_and_stops_the_open_timer() -> None:
    rig = opened()
    assert rig.app.peers == [rig.conn]
    assert rig.conn.is_open
    assert rig.conn.remote_address == "203.0.113.5"
    assert rig.app.requests[0].upgrade
    rig.clock.advance(Limits().open_timeout + 1)
    assert not rig.transport.aborted


def test_no_extension_is_negotiated_so_one_frame_fits_every_client() -> None:
    rig = Rig()
    rig.conn.data_received(
        b"GET / HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
        b"Sec-WebSocket-Extensions: permessage-deflate; client_max_window_bits\r\n\r\n"
    )
    head = rig.transport.take()
    assert head.startswith(b"HTTP/1.1 101 ")
    assert b"Sec-WebSocket-Extensions" not in head


def test_a_connection_that_sends_no_request_is_aborted_after_the_open_timeout() -> None:
    rig = Rig()
    rig.conn.data_received(b"GET / HTTP/1.1\r\n")  # and then nothing
    rig.clock.advance(9.9)
    assert not rig.transport.aborted
    rig.clock.advance(0.2)
    assert rig.transport.aborted
    assert rig.server.stats["open_timeout"] == 1


def test_a_refusal_from_the_app_is_sent_instead_of_the_upgrade() -> None:
    rig = Rig()
    rig.app.answer = lambda request: response(HTTPStatus.SERVICE_UNAVAILABLE, b"shutting down\n")
    assert rig.handshake().status_code == 503
    assert rig.app.peers == []
    assert rig.transport.closed


def test_an_upgrade_elsewhere_than_the_websocket_path_is_404() -> None:
    rig = Rig()
    assert rig.handshake("/healthz").status_code == 404
    assert rig.app.requests == []


def test_a_handshake_the_library_refuses_gets_its_answer() -> None:
    rig = Rig()
    rig.conn.data_received(
        b"GET / HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        b"Sec-WebSocket-Version: 13\r\n\r\n"  # no Sec-WebSocket-Key
    )
    assert rig.transport.take().startswith(b"HTTP/1.1 400 ")
    assert rig.transport.closed
    assert rig.app.peers == []


# -- messages in ------------------------------------------------------------------------


def test_text_binary_and_fragmented_messages_reach_the_handler_in_order() -> None:
    rig = opened()
    rig.conn.data_received(
        masked(TEXT, b"one")
        + masked(BINARY, b"\x00\x01")
        + masked(TEXT, b"thr", fin=False)
        + masked(PING, b"?")  # a control frame may come between fragments
        + masked(CONT, b"e", fin=False)
        + masked(CONT, "é".encode(), fin=True)
    )
    assert rig.app.messages == ["one", b"\x00\x01", "threé"]
    assert [f.opcode for f in rig.read()] == [PONG]


def test_a_message_split_anywhere_is_whole_when_it_arrives() -> None:
    data = masked(TEXT, b'{"type": "ping"}')
    for cut in range(1, len(data)):
        rig = opened()
        rig.conn.data_received(data[:cut])
        assert rig.app.messages == []
        rig.conn.data_received(data[cut:])
        assert rig.app.messages == ['{"type": "ping"}']


def test_invalid_utf8_ends_the_reading_and_the_app_closes_with_1007_after_its_answers() -> None:
    for frames in (
        masked(TEXT, b"\xff\xfe"),
        masked(TEXT, b"\xc3", fin=False) + masked(CONT, b"(", fin=True),
    ):
        rig = opened()
        rig.conn.data_received(masked(TEXT, b"before") + frames + masked(TEXT, b"after"))
        assert rig.app.messages == ["before"]
        ((code, _),) = rig.app.invalid
        assert code == CloseCode.INVALID_DATA
        rig.conn.data_received(masked(TEXT, b"later"))  # nothing more is parsed
        assert rig.app.messages == ["before"]
        rig.conn.write(server_frame("the answer to before"))
        rig.conn.close(code, "not UTF-8")
        answer, close = rig.read()
        assert answer.data == b"the answer to before"
        assert close_of(close).code == CloseCode.INVALID_DATA
        assert rig.transport.eof  # failed: the server's end closes at once


def test_a_close_the_app_never_starts_after_invalid_utf8_is_forced() -> None:
    rig = opened()
    rig.conn.data_received(masked(TEXT, b"\xff"))
    rig.clock.advance(Limits().close_timeout - 0.1)
    assert rig.read() == []
    rig.clock.advance(0.2)
    (close,) = rig.read()
    assert close_of(close).code == CloseCode.INVALID_DATA


def test_a_message_above_the_hard_limit_fails_with_1009() -> None:
    rig = opened(Limits(max_message_bytes=1000))
    rig.conn.data_received(masked(TEXT, b"x" * 1001))
    (close,) = rig.read()
    assert close_of(close).code == CloseCode.MESSAGE_TOO_BIG
    assert rig.app.messages == []


def test_frames_after_the_servers_close_are_ignored() -> None:
    rig = opened()
    rig.conn.close(1001, "bye")
    rig.conn.data_received(masked(TEXT, b"late"))
    assert rig.app.messages == []
    assert close_of(rig.read()[0]).code == 1001


# -- frames out ---------------------------------------------------------------------------


def test_framed_bytes_go_out_verbatim_in_order_with_the_librarys_own_frames() -> None:
    rig = opened()
    rig.conn.write(server_frame("a"))
    rig.conn.data_received(masked(PING, b"p"))
    rig.conn.write(server_frame("b") + server_frame("c"))
    assert [(f.opcode, bytes(f.data)) for f in rig.read()] == [
        (TEXT, b"a"),
        (PONG, b"p"),
        (TEXT, b"b"),
        (TEXT, b"c"),
    ]


def test_nothing_is_written_after_the_close_frame() -> None:
    rig = opened()
    rig.conn.write(server_frame("before"))
    rig.conn.close(1008, "enough")
    rig.conn.write(server_frame("after"))
    frames = rig.read()
    assert [f.opcode for f in frames] == [TEXT, CLOSE]
    assert close_of(frames[1]).reason == "enough"
    assert not rig.conn.is_open


def test_over_the_outbound_bound_the_client_is_failed_with_1013_then_aborted() -> None:
    rig = opened(Limits(outbound_buffer_bytes=4096, outbound_pause_bytes=1024))
    rig.transport.buffered = 5000  # the client reads nothing
    rig.conn.write(server_frame("x"))
    frames = rig.read()
    assert close_of(frames[-1]).code == CloseCode.TRY_AGAIN_LATER
    assert rig.transport.eof
    rig.conn.write(server_frame("dropped"))
    assert rig.read() == []
    assert rig.server.stats["slow_client"] == 1
    rig.clock.advance(Limits().close_timeout + 0.1)
    assert rig.transport.aborted


def test_pongs_count_against_the_outbound_bound_too() -> None:
    rig = opened(Limits(outbound_buffer_bytes=4096, outbound_pause_bytes=1024))
    rig.transport.buffered = 4095
    rig.conn.data_received(masked(PING, b"1"))
    rig.transport.buffered = 4200
    rig.conn.data_received(masked(PING, b"2"))
    assert rig.server.stats["slow_client"] == 1
    assert close_of(rig.read()[-1]).code == CloseCode.TRY_AGAIN_LATER


def test_above_the_pause_mark_a_client_is_not_read_so_its_pings_are_not_even_parsed() -> None:
    rig = opened()
    assert rig.transport.limits == (65536, 16384)
    rig.conn.pause_writing()  # the transport's buffer passed the high-water mark
    assert not rig.transport.reading
    rig.conn.data_received(masked(PING, b"x") * 50)  # already in flight when paused
    assert rig.read() == []
    rig.conn.resume_writing()
    assert rig.transport.reading
    rig.clock.advance(0)
    assert len(rig.read()) == 50


# -- budgets -------------------------------------------------------------------------------


def test_a_frame_flood_is_held_back_then_resumed_by_a_timer() -> None:
    rig = opened(Limits(read_frames_per_second=10, read_frames_burst=20))
    rig.conn.data_received(masked(PING, b"x") * 30)  # parsed in one chunk: 10 in debt
    assert len(rig.read()) == 30
    assert not rig.transport.reading  # nothing more is read until the debt is paid
    assert rig.server.stats["throttled"] == 1
    rig.conn.data_received(masked(PING, b"y") * 5)  # already in flight
    assert rig.read() == []
    rig.clock.advance(1.0)
    assert rig.read() == []
    rig.clock.advance(0.2)  # out of debt: the five are read, which is a debt again
    assert len(rig.read()) == 5
    assert rig.server.stats["throttled"] == 2
    rig.clock.advance(0.5)
    assert rig.transport.reading
    assert rig.conn.is_open


@pytest.mark.parametrize("opcode", [PING, PONG, TEXT, BINARY])
def test_a_flood_of_tiny_frames_of_any_kind_closes_with_1008_and_parses_one_chunk_at_most(
    opcode: Opcode,
) -> None:
    rig = opened()
    frame = masked(opcode)
    rig.conn.data_received(frame * 20_000)  # 120 kB of 6-byte frames in one read
    frames = rig.read()
    assert close_of(frames[-1]).code == CloseCode.POLICY_VIOLATION
    assert close_of(frames[-1]).reason == "too many frames"
    handled = len(frames) - 1 if opcode is PING else len(rig.app.messages)
    assert handled <= FEED_CHUNK // len(frame)
    assert rig.server.stats["over_budget"] == 1


def test_frames_after_the_clients_own_close_frame_are_budgeted_and_discarded() -> None:
    rig = opened()
    rig.conn.data_received(masked(CLOSE, b"\x03\xe8") + masked(TEXT, b"x" * 1000) * 1000)
    assert rig.app.messages == []
    frames = rig.read()
    assert [f.opcode for f in frames] == [CLOSE]
    # 1 MB arrived: no more than a burst is even looked at now, the rest waits unread.
    assert not rig.transport.reading
    rig.clock.advance(Limits().close_timeout + 0.1)
    assert rig.transport.aborted


def test_a_client_held_back_too_long_is_closed_with_1008() -> None:
    limits = Limits(read_bytes_per_second=1000, read_bytes_burst=4096, throttle_close_seconds=5)
    rig = opened(limits)
    for _ in range(20):
        rig.conn.data_received(masked(TEXT, b"y" * 2000))
        rig.clock.advance(0.5)
        if not rig.conn.is_open:
            break
    frames = rig.read()
    assert close_of(frames[-1]).code == CloseCode.POLICY_VIOLATION
    assert "too long" in close_of(frames[-1]).reason


def test_a_legitimate_bot_at_20_messages_a_second_is_never_held_back() -> None:
    rig = opened()
    message = masked(TEXT, b'{"type": "roll", "room": "r_0123456789", "id": 12345}')
    for tick in range(20 * 60):
        rig.conn.data_received(message)
        if tick % 20 == 0:
            rig.conn.data_received(masked(PONG, b"unsolicited"))
        rig.clock.advance(0.05)
        rig.read()
        rig.reply()  # the client answers the server's pings
    assert len(rig.app.messages) == 1200
    assert rig.server.stats["throttled"] == 0
    assert rig.transport.pauses == 0


def test_the_app_may_pause_reading_for_a_while() -> None:
    rig = opened()
    rig.conn.pause(0.5)
    assert not rig.transport.reading
    rig.conn.data_received(masked(TEXT, b"queued"))
    assert rig.app.messages == []
    rig.conn.pause(0.2)  # a shorter pause does not cut the longer one
    rig.clock.advance(0.3)
    assert not rig.transport.reading
    rig.clock.advance(0.3)
    assert rig.transport.reading
    assert rig.app.messages == ["queued"]


# -- keepalive and closing -----------------------------------------------------------------


def test_keepalive_pings_and_a_missing_pong_fails_with_1011() -> None:
    rig = opened(Limits(ping_interval=20, ping_timeout=10))
    rig.clock.advance(20)
    (ping,) = rig.read()
    assert ping.opcode is PING
    rig.send(Frame(PONG, ping.data))
    rig.clock.advance(20)
    (ping,) = rig.read()
    rig.clock.advance(9.9)
    assert rig.conn.is_open
    rig.clock.advance(0.2)
    (close,) = rig.read()
    assert close_of(close).code == CloseCode.INTERNAL_ERROR
    assert rig.transport.eof
    assert rig.server.stats["keepalive_timeout"] == 1


def test_the_closing_handshake_completes_and_the_handler_hears_of_it_once() -> None:
    rig = opened()
    rig.conn.close(1001, "going away")
    rig.read()
    assert rig.client.state is State.CLOSING
    rig.conn.data_received(b"".join(rig.client.data_to_send()))  # the client's close frame
    assert rig.transport.eof  # the server ends its side of TCP first
    rig.conn.eof_received()
    rig.lost()
    assert rig.app.closed == [1001]
    assert rig.clock.pending() == []


def test_a_peer_that_never_finishes_closing_is_aborted_after_the_close_timeout() -> None:
    rig = opened(Limits(close_timeout=3))
    rig.conn.close(1000)
    rig.clock.advance(2.9)
    assert not rig.transport.aborted
    rig.clock.advance(0.2)
    assert rig.transport.aborted


def test_a_dropped_connection_cancels_every_timer_and_reports_1006() -> None:
    rig = opened()
    rig.conn.pause(5)
    rig.conn.data_received(masked(PING) * 300)
    rig.lost()
    assert rig.app.closed == [CloseCode.ABNORMAL_CLOSURE]
    assert rig.clock.pending() == []
    rig.conn.write(server_frame("late"))  # the app may still write: dropped
    assert rig.transport.take() == b""


def test_a_flooder_that_goes_on_after_its_1008_is_aborted() -> None:
    rig = opened()
    rig.conn.data_received(masked(PING) * 20_000)
    assert close_of(rig.read()[-1]).code == CloseCode.POLICY_VIOLATION
    assert not rig.transport.aborted
    for _ in range(100):
        if rig.transport.aborted:
            break
        rig.conn.data_received(masked(TEXT, b"z" * 100) * 100)
        rig.clock.advance(1.0)
    assert rig.transport.aborted
    assert rig.clock.now - 1000.0 < Limits().close_timeout
