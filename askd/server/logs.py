"""Logging: structlog with context variables, JSON when not on a terminal.

Handlers bind ``sessionId``, ``requestId``, ``userId`` and ``connectionId``
with ``structlog.contextvars`` so every line of one request or frame carries
them. Tornado's own stdlib loggers are bridged in. Tokens and secrets are
scrubbed before rendering: no line ever carries one.
"""

from __future__ import annotations

import json
import logging
import re
import sys
import urllib.parse
from typing import Any, TextIO

import orjson
import structlog

_LEVELS = {"debug": 10, "info": 20, "warning": 30, "error": 40, "critical": 50}
_SENSITIVE_KEYS = {"token", "secret", "authorization", "password", "hostkey", "host_key"}  # hostKey: protocol section 5
_TOKEN_QUERY = re.compile(r"(?i)(token=)[^&\s\"']+")
_JWT = re.compile(r"eyJ[\w-]+\.eyJ[\w-]+\.[\w-]+")
_LINK = re.compile(r"(/a/)[\w.-]+")  # an answer link's token (askd.channels.links) answers its question
REDACTED = "[REDACTED]"
_min_level = _LEVELS["info"]  # as configured


def enabled(level: str) -> bool:
    """Whether a line at ``level`` is written: lets a caller skip building
    one that would be dropped (the access log's, for every request)."""
    return _LEVELS[level] >= _min_level


def redact_text(text: str) -> str:
    # Every logged string passes here: skip the work when nothing can match.
    if "%" in text:
        # `?%74oken=` is `?token=` to the server: decode (as often as it was
        # encoded, within reason) so that the patterns see what it sees.
        for _ in range(3):
            decoded = urllib.parse.unquote(text)
            if decoded == text:
                break
            text = decoded
    if "=" not in text and "eyJ" not in text and "/a/" not in text:
        return text
    text = _LINK.sub(r"\1" + REDACTED, text)
    return _JWT.sub(REDACTED, _TOKEN_QUERY.sub(r"\1" + REDACTED, text))


def _redact(_: Any, __: str, event: dict[str, Any]) -> dict[str, Any]:
    for key, value in event.items():
        if key.lower() in _SENSITIVE_KEYS:
            event[key] = REDACTED
        elif isinstance(value, str):
            event[key] = redact_text(value)
    return event


def _serialize(event: dict[str, Any], **_: Any) -> str:
    # orjson renders a line in a tenth of json's time (docs/performance.md);
    # what it cannot take (a lone surrogate, a huge integer) goes to json.
    try:
        return orjson.dumps(event, default=repr, option=orjson.OPT_NON_STR_KEYS).decode()
    except TypeError:
        return json.dumps(event, default=repr)


class _StdlibBridge(logging.Handler):
    """Sends Tornado's (and any library's) stdlib records through structlog."""

    def emit(self, record: logging.LogRecord) -> None:
        log = structlog.get_logger(record.name)
        kw: dict[str, Any] = {"logger": record.name}
        if record.exc_info:
            kw["exc_info"] = record.exc_info
        log.log(record.levelno, record.getMessage(), **kw)


def configure(level: str = "info", fmt: str = "json", stream: TextIO | None = None) -> None:
    global _min_level
    _min_level = _LEVELS[level]
    stream = stream or sys.stderr
    renderer: Any
    if fmt == "console":
        renderer = structlog.dev.ConsoleRenderer(colors=stream.isatty())
    else:
        renderer = structlog.processors.JSONRenderer(serializer=_serialize)
    processors: list[Any] = [
        structlog.contextvars.merge_contextvars,
        structlog.processors.add_log_level,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
        _redact,
    ]
    if fmt != "console":
        processors.append(structlog.processors.format_exc_info)
    processors.append(renderer)
    structlog.configure(
        processors=processors,
        wrapper_class=structlog.make_filtering_bound_logger(_LEVELS[level]),
        logger_factory=structlog.WriteLoggerFactory(stream),
        cache_logger_on_first_use=False,
    )
    root = logging.getLogger()
    root.handlers[:] = [_StdlibBridge()]
    root.setLevel(_LEVELS[level])
    # Tornado's access log is replaced by our own `http.request` event.
    logging.getLogger("tornado.access").disabled = True
    # httpx logs each request's full URL at info, and a webhook URL keeps its
    # secret in the path (Slack's do): the sender logs a redacted one itself.
    for name in ("httpx", "httpcore"):
        logging.getLogger(name).setLevel(logging.WARNING)


def get_logger(name: str = "askd") -> Any:
    return structlog.get_logger(name)
