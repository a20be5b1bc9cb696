"""Structured logging with structlog: JSON lines for machines, readable lines for people."""

from __future__ import annotations

import json
import logging
import sys

import structlog
from pydantic_core import to_json

from server.config import LogFormat


def configure(log_format: LogFormat, level: str) -> None:
    json_lines = log_format is LogFormat.JSON or (
        log_format is LogFormat.AUTO and not sys.stderr.isatty()
    )
    renderer: structlog.typing.Processor = (
        structlog.processors.JSONRenderer(serializer=_json)
        if json_lines
        else structlog.dev.ConsoleRenderer(colors=sys.stderr.isatty())
    )
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            structlog.processors.format_exc_info
            if json_lines
            else structlog.processors.StackInfoRenderer(),
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(
            logging.getLevelNamesMapping()[level.upper()]
        ),
        logger_factory=structlog.PrintLoggerFactory(file=sys.stderr),
        cache_logger_on_first_use=False,
    )


def _json(record: object, **_: object) -> str:
    # pydantic-core's encoder: a busy server logs a line a hand, and the
    # standard library's json module took four times as long per line.
    # Anything it cannot encode is logged as its repr(); should it refuse a
    # value outright (a lone surrogate in a str), the standard library writes it.
    try:
        return to_json(record, fallback=repr).decode()
    except ValueError:
        return json.dumps(record, default=repr)


def get_logger(**bound: object) -> structlog.typing.FilteringBoundLogger:
    logger: structlog.typing.FilteringBoundLogger = structlog.get_logger("tali").bind(**bound)
    return logger
