"""The plain HTTP endpoints of the game port, and of the metrics port."""

from __future__ import annotations

from pathlib import Path

from websockets.datastructures import Headers

from server.net.http import METRICS_COST, Endpoints
from server.net.static import StaticFiles, default_client_dir
from server.net.transport import HttpRequest
from server.runtime.config import ServerConfig

from ..transport_fakes import FakeClock


def request(path: str, client: str = "192.0.2.1", upgrade: bool = False) -> HttpRequest:
    return HttpRequest("GET", path, "", Headers(), client, upgrade)


class State:
    ready = True


def endpoints(clock: FakeClock, *, game: bool = True, metrics: bool = True) -> Endpoints:
    return Endpoints(
        ServerConfig(http_rate_per_second=1, http_rate_burst=30),
        clock,
        ready=lambda: State.ready,
        exposition=lambda: b"tali_up 1\n",
        static=StaticFiles(default_client_dir()) if game else None,
        metrics=metrics,
    )


def status(answer: object) -> int:
    assert answer is not None
    code: int = answer.status_code  # type: ignore[attr-defined]
    return code


def test_probes_are_never_rate_limited_but_files_and_metrics_are() -> None:
    clock = FakeClock()
    http = endpoints(clock)
    assert [status(http.answer(request("/healthz"))) for _ in range(100)] == [200] * 100
    assert status(http.answer(request("/metrics"))) == 200
    assert status(http.answer(request("/metrics"))) == 200
    limited = http.answer(request("/app.js"))
    assert status(limited) == 429
    assert limited is not None
    assert limited.headers["Retry-After"] == "2"  # one in debt, one to save
    assert status(http.answer(request("/app.js", client="192.0.2.2"))) == 200
    clock.advance(METRICS_COST)
    assert status(http.answer(request("/app.js"))) == 200
    assert status(http.answer(request("/readyz"))) == 200


def test_upgrades_are_accepted_only_while_ready() -> None:
    http = endpoints(FakeClock())
    assert http.answer(request("/", upgrade=True)) is None
    State.ready = False
    try:
        assert status(http.answer(request("/", upgrade=True))) == 503
        assert status(http.answer(request("/readyz"))) == 503
    finally:
        State.ready = True


def test_the_metrics_port_serves_metrics_only_and_the_game_port_then_none() -> None:
    metrics_port = endpoints(FakeClock(), game=False, metrics=True)
    assert status(metrics_port.answer(request("/metrics"))) == 200
    assert status(metrics_port.answer(request("/"))) == 404
    assert status(metrics_port.answer(request("/", upgrade=True))) == 404
    game_port = endpoints(FakeClock(), game=True, metrics=False)
    assert status(game_port.answer(request("/metrics"))) == 404
    assert Path(default_client_dir(), "index.html").is_file()
