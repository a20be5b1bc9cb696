"""The JSON log: one object a line, an exception one field of it, whoever logs (issue 24)."""

from __future__ import annotations

import asyncio
import io
import json
import logging
import sys
import threading
from typing import Any

import pytest

from server.runtime.config_edge import LogFormat
from server.runtime.logs import configure, get_logger, loop_exception


@pytest.fixture
def json_log(monkeypatch: pytest.MonkeyPatch) -> io.StringIO:
    """The server's JSON log, written to a buffer (as it would be to stderr)."""
    stream = io.StringIO()
    monkeypatch.setattr(sys, "stderr", stream)
    configure(LogFormat.JSON, "info")  # the shell's conftest puts every hook back after
    return stream


def records(stream: io.StringIO) -> list[dict[str, Any]]:
    return [json.loads(line) for line in stream.getvalue().splitlines()]


def failing() -> None:
    token = "a-players-secret-token"  # a local: never in the log
    try:
        raise OSError(f"database or disk is full ({len(token)})")
    except OSError as exc:
        raise RuntimeError("commit failed") from exc


def test_an_exception_is_one_field_of_its_line(json_log: io.StringIO) -> None:
    try:
        failing()
    except RuntimeError:
        get_logger().exception("store_failed")
    (record,) = records(json_log)
    assert record["event"] == "store_failed"
    # Structured: the whole chain, each with its type and value.
    kinds = [(e["exc_type"], e["exc_value"]) for e in record["exception"]]
    assert ("OSError", "database or disk is full (22)") in kinds
    assert ("RuntimeError", "commit failed") in kinds
    assert "a-players-secret-token" not in json.dumps(record)


def test_the_standard_librarys_loggers_write_the_same_lines(
    json_log: io.StringIO,
) -> None:
    try:
        failing()
    except RuntimeError:
        logging.getLogger("asyncpg").warning("the driver says %s", "so", exc_info=True)
    logging.getLogger("asyncpg").info("below warning: not written")
    (record,) = records(json_log)
    assert (record["event"], record["level"], record["logger"]) == (
        "the driver says so",
        "warning",
        "asyncpg",
    )
    assert {e["exc_value"] for e in record["exception"]} == {
        "commit failed",
        "database or disk is full (22)",
    }


def test_what_nobody_caught_is_one_line_too(json_log: io.StringIO) -> None:
    thread = threading.Thread(target=failing, name="checkpoint")
    thread.start()
    thread.join()
    try:
        failing()
    except RuntimeError:
        sys.excepthook(*sys.exc_info())  # type: ignore[arg-type]
    loop = asyncio.new_event_loop()
    try:
        loop_exception(loop, {"message": "Task exception was never retrieved",
                              "exception": RuntimeError("lost")})  # fmt: skip
    finally:
        loop.close()
    events = [(r["event"], r["level"]) for r in records(json_log)]
    assert events == [
        ("thread_failed", "error"),
        ("uncaught_exception", "critical"),
        ("loop_exception", "error"),
    ]
