"""The head of one HTTP/1.x request, parsed strictly, before anything else sees it.

A connection carries exactly one request: a GET or HEAD with no body (or a POST
with no body under ``HeadLimits.post_prefix``: the operator's API), or the
WebSocket upgrade. Anything else gets a documented status and the connection
is closed: 400 (malformed; a body; both or repeated ``Content-Length`` and
``Transfer-Encoding``, whitespace before a colon, folded lines, control
characters), 405 (another method), 414 (request target too long), 431 (too
many or too large header fields). Bytes after the head are never parsed as
another request.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from http import HTTPStatus

from websockets.datastructures import Headers

ALLOWED_METHODS = ("GET", "HEAD")

_TOKEN = re.compile(rb"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
# Field values: visible ASCII, space, tab and obs-text; no other control character.
_VALUE = re.compile(rb"[\t\x20-\x7e\x80-\xff]*")
_TARGET = re.compile(rb"/[\x21-\x7e]*")
_VERSIONS = (b"HTTP/1.1", b"HTTP/1.0")
# What a request line may look like before its end has arrived.
_PARTIAL_LINE = re.compile(rb"[!#$%&'*+\-.^_`|~0-9A-Za-z]*( [\x21-\x7e]*( [\x21-\x7e]*\r?)?)?")


@dataclass(frozen=True, slots=True)
class HeadLimits:
    max_target: int = 4096
    max_header_bytes: int = 16384
    max_headers: int = 64
    post_prefix: str | None = None
    """Paths under which a POST without a body is taken too (an API's acts); None: none."""


@dataclass(frozen=True, slots=True)
class RequestHead:
    method: str
    target: str
    version: str
    headers: Headers
    size: int
    """Bytes of the head, blank line included."""

    @property
    def path(self) -> str:
        return self.target.split("?", 1)[0]

    @property
    def upgrade(self) -> bool:
        """Whether this asks for a WebSocket upgrade."""
        return any(
            token.strip().lower() == "websocket"
            for value in self.headers.get_all("Upgrade")
            for token in value.split(",")
        )


class HeadError(Exception):
    """The request cannot be served: answer ``status`` and close."""

    def __init__(self, status: HTTPStatus, reason: str) -> None:
        super().__init__(reason)
        self.status = status
        self.reason = reason


def parse_head(buffer: bytes | bytearray, limits: HeadLimits) -> RequestHead | None:
    """The request head at the start of ``buffer``, or None if more bytes are needed.

    Raises HeadError for a request that must be refused; it may do so before
    the head is complete, as soon as a limit is passed.
    """
    end = buffer.find(b"\r\n\r\n")
    first = buffer.find(b"\r\n")
    line_limit = limits.max_target + 32  # method, spaces and version around the target
    if first == -1 or first > line_limit:
        if first == -1 and len(buffer) <= line_limit:
            if not _PARTIAL_LINE.fullmatch(buffer):
                # Not even the start of a request line (binary, TLS on the plain port).
                raise HeadError(HTTPStatus.BAD_REQUEST, "malformed request line")
            return None
        raise HeadError(HTTPStatus.REQUEST_URI_TOO_LONG, "request target too long")
    if end == -1:
        if len(buffer) - first > limits.max_header_bytes:
            raise HeadError(HTTPStatus.REQUEST_HEADER_FIELDS_TOO_LARGE, "header fields too large")
        if buffer.count(b"\r\n") - 1 > limits.max_headers:
            raise HeadError(HTTPStatus.REQUEST_HEADER_FIELDS_TOO_LARGE, "too many header fields")
        return None
    if end - first > limits.max_header_bytes:
        raise HeadError(HTTPStatus.REQUEST_HEADER_FIELDS_TOO_LARGE, "header fields too large")
    method, target, version = _request_line(bytes(buffer[:first]), limits)
    lines = bytes(buffer[first + 2 : end]).split(b"\r\n") if end > first else []
    if len(lines) > limits.max_headers:
        raise HeadError(HTTPStatus.REQUEST_HEADER_FIELDS_TOO_LARGE, "too many header fields")
    headers = Headers()
    for line in lines:
        name, sep, value = line.partition(b":")
        if not sep or not _TOKEN.fullmatch(name):
            # Also a folded line (leading whitespace) and "Name : value".
            raise HeadError(HTTPStatus.BAD_REQUEST, "malformed header field")
        value = value.strip(b" \t")
        if not _VALUE.fullmatch(value):
            raise HeadError(HTTPStatus.BAD_REQUEST, "control character in a header field")
        headers[name.decode("ascii")] = value.decode("iso-8859-1")
    posted = (
        method == "POST"
        and limits.post_prefix is not None
        and target.startswith(limits.post_prefix)
    )
    if method not in ALLOWED_METHODS and not posted:
        raise HeadError(HTTPStatus.METHOD_NOT_ALLOWED, f"{method} is not served here")
    _check_framing(headers, version)
    return RequestHead(method, target, version, headers, end + 4)


def _request_line(line: bytes, limits: HeadLimits) -> tuple[str, str, str]:
    parts = line.split(b" ")
    if len(parts) != 3:
        raise HeadError(HTTPStatus.BAD_REQUEST, "malformed request line")
    method, target, version = parts
    if len(target) > limits.max_target:
        raise HeadError(HTTPStatus.REQUEST_URI_TOO_LONG, "request target too long")
    if not _TOKEN.fullmatch(method) or version not in _VERSIONS:
        raise HeadError(HTTPStatus.BAD_REQUEST, "malformed request line")
    if not _TARGET.fullmatch(target):
        raise HeadError(HTTPStatus.BAD_REQUEST, "the request target must be a path")
    return method.decode("ascii"), target.decode("ascii"), version.decode("ascii")


def _check_framing(headers: Headers, version: str) -> None:
    """No body, nothing a proxy in front could read differently (request smuggling)."""
    if "Transfer-Encoding" in headers:
        raise HeadError(HTTPStatus.BAD_REQUEST, "a request body is not accepted")
    lengths = headers.get_all("Content-Length")
    if len(lengths) > 1 or (lengths and lengths[0] != "0"):
        raise HeadError(HTTPStatus.BAD_REQUEST, "a request body is not accepted")
    hosts = headers.get_all("Host")
    if len(hosts) > 1 or (not hosts and version == "HTTP/1.1"):
        raise HeadError(HTTPStatus.BAD_REQUEST, "exactly one Host header is required")
