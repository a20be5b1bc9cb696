"""Structured logging with structlog: JSON lines for machines, readable lines for people.

In JSON, every line on stderr is one JSON object: an exception is one field of its line
(``exception``: the chain and its frames as structured data, no local variables), never a multi-line
traceback in the stream. The standard library's loggers (asyncio's, the database drivers')
and exceptions nobody caught (in a thread, or escaping ``main``) are written the same way.
"""

from __future__ import annotations

import json
import logging
import sys
import threading
from types import TracebackType

import structlog
from pydantic_core import to_json

from server.runtime.config_edge import LogFormat


def configure(log_format: LogFormat, level: str) -> None:
    json_lines = log_format is LogFormat.JSON or (
        log_format is LogFormat.AUTO and not sys.stderr.isatty()
    )
    renderer: structlog.typing.Processor = (
        structlog.processors.JSONRenderer(serializer=_json)
        if json_lines
        else structlog.dev.ConsoleRenderer(colors=sys.stderr.isatty())
    )
    exceptions: structlog.typing.Processor = (
        # Never the frames' local variables: they may hold a token, a player's secret.
        structlog.processors.ExceptionRenderer(
            structlog.tracebacks.ExceptionDictTransformer(show_locals=False, use_rich=False)
        )
        if json_lines
        else structlog.processors.StackInfoRenderer()
    )
    stamp = structlog.processors.TimeStamper(fmt="iso", utc=True)
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            stamp,
            exceptions,
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(
            logging.getLevelNamesMapping()[level.upper()]
        ),
        logger_factory=structlog.PrintLoggerFactory(file=sys.stderr),
        cache_logger_on_first_use=False,
    )
    # The standard library's loggers, warnings and up, as the same lines.
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(
        structlog.stdlib.ProcessorFormatter(
            processors=[
                structlog.stdlib.ProcessorFormatter.remove_processors_meta,
                exceptions,
                renderer,
            ],
            foreign_pre_chain=[
                structlog.stdlib.add_log_level,
                structlog.stdlib.add_logger_name,
                stamp,
            ],
        )
    )
    root = logging.getLogger()
    root.handlers = [handler]
    root.setLevel(max(logging.WARNING, logging.getLevelNamesMapping()[level.upper()]))
    sys.excepthook = _uncaught
    threading.excepthook = _uncaught_in_thread


def _uncaught(kind: type[BaseException], exc: BaseException, tb: TracebackType | None) -> None:
    get_logger().critical("uncaught_exception", exc_info=(kind, exc, tb))


def _uncaught_in_thread(args: threading.ExceptHookArgs) -> None:
    if args.exc_value is None:
        return
    get_logger().error(
        "thread_failed",
        thread=args.thread.name if args.thread is not None else None,
        exc_info=(args.exc_type, args.exc_value, args.exc_traceback),
    )


def loop_exception(loop: object, context: dict[str, object]) -> None:
    """The event loop's handler of exceptions nothing awaited (a task's, a callback's)."""
    exc = context.get("exception")
    get_logger().error(
        "loop_exception",
        message=str(context.get("message", "")),
        exc_info=exc if isinstance(exc, BaseException) else None,
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
