"""The plain HTTP endpoints: health, readiness, metrics and the browser client's files.

The transport has already refused whatever is not a well-formed GET or HEAD
without a body (see server.net.httphead); here each path gets its answer.
``/healthz`` and ``/readyz`` are free (probes must always get through: the
transport lets them through every limit of its own too); the static files and
``/metrics`` draw on a token bucket per client address, ``/metrics`` at
``METRICS_COST`` tokens since a scrape renders every family.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from http import HTTPStatus

from websockets.datastructures import Headers
from websockets.http11 import Response

from server.net.budget import Buckets, Now
from server.net.static import SECURITY_HEADERS, StaticFiles
from server.net.transport import HttpRequest
from server.runtime.config import ServerConfig
from server.runtime.metrics import CONTENT_TYPE

METRICS_COST = 15.0
"""A scrape renders every family, 1.4 ms however many rooms (their gauges are kept as they
change: it walked every room before, 19 ms at 10,000): with a burst of 120 requests, an
address gets 8 scrapes in a burst."""


class Endpoints:
    """Answers to plain requests; ``game`` and ``metrics`` say what this port serves."""

    def __init__(
        self,
        config: ServerConfig,
        clock: Now,
        *,
        ready: Callable[[], bool],
        exposition: Callable[[], bytes],
        static: StaticFiles | None,
        metrics: bool,
        phase: Callable[[], str] = lambda: "not ready",
    ) -> None:
        """``phase`` says why the server is not ready (the body of a 503)."""
        self._ready = ready
        self._phase = phase
        self._exposition = exposition
        self._static = static
        self._metrics = metrics
        self._budget = Buckets(config.http_rate_per_second, config.http_rate_burst, clock)

    def answer(self, request: HttpRequest) -> Response | None:
        """The response to ``request``; None accepts a WebSocket upgrade."""
        path = request.path
        if request.upgrade:
            if self._static is None:
                return response(HTTPStatus.NOT_FOUND, b"no game here\n")
            if not self._ready():
                return response(HTTPStatus.SERVICE_UNAVAILABLE, self._not_ready())
            return None
        if path == "/healthz":
            return response(HTTPStatus.OK, b"ok\n")
        if path == "/readyz":
            if self._ready():
                return response(HTTPStatus.OK, b"ready\n")
            return response(HTTPStatus.SERVICE_UNAVAILABLE, self._not_ready())
        if path == "/metrics" and self._metrics:
            return self._limited(request, METRICS_COST) or response(
                HTTPStatus.OK, self._exposition(), CONTENT_TYPE
            )
        if self._static is None:
            return response(HTTPStatus.NOT_FOUND, b"not found\n")
        limited = self._limited(request, 1.0)
        if limited is not None:
            return limited
        found = self._static.find(path, request.query, request.headers.get("If-None-Match"))
        return response(
            found.status, found.body, found.content_type, (*found.headers, *SECURITY_HEADERS)
        )

    def _not_ready(self) -> bytes:
        return f"{self._phase()}\n".encode()

    def _limited(self, request: HttpRequest, cost: float) -> Response | None:
        if self._budget.take(request.client, cost) >= 0:
            return None
        retry = str(max(1, math.ceil(self._budget.retry_after(request.client))))
        return response(
            HTTPStatus.TOO_MANY_REQUESTS, b"too many requests\n", extra=(("Retry-After", retry),)
        )


def response(
    status: HTTPStatus,
    body: bytes,
    content_type: str = "text/plain; charset=utf-8",
    extra: tuple[tuple[str, str], ...] = (),
) -> Response:
    """A whole answer; ``Cache-Control: no-cache`` unless ``extra`` says otherwise."""
    cached = any(name == "Cache-Control" for name, _ in extra)
    headers = Headers(
        [
            ("Content-Type", content_type),
            ("Content-Length", str(len(body))),
            *(() if cached else (("Cache-Control", "no-cache"),)),
            *extra,
        ]
    )
    return Response(status.value, status.phrase, headers, body)
