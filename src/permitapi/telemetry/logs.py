"""Log configuration: one JSON object per line in production, readable text in development,
and the current request's id on every line either way (through a context variable the request
middleware sets, so lines logged deep inside a service carry it too)."""

from __future__ import annotations

import contextvars
import logging
import sys
from datetime import UTC, datetime
from typing import Final, Literal

import orjson

LogFormat = Literal["json", "text"]
REQUEST_ID: Final[contextvars.ContextVar[str | None]] = contextvars.ContextVar(
    "permitapi_request_id", default=None
)
# LogRecord attributes that are not "extra" fields a caller passed.
_STANDARD_ATTRIBUTES: Final = frozenset(
    logging.LogRecord("", 0, "", 0, "", None, None).__dict__
) | {"message", "asctime", "request_id", "taskName", "color_message"}
# uvicorn passes `color_message`, the message again with ANSI colour escapes, as an extra
# field; it is left out above so that no line carries it.
ACCESS_LOGGER: Final = "permitapi.access"


class RequestIdFilter(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        record.request_id = REQUEST_ID.get()
        return True


class DemoteToDebug(logging.Filter):
    """httpx logs every request it sends at INFO: one line per portal request drowns what a
    job or a server says. Its records are kept as DEBUG, shown when the level is DEBUG."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno == logging.INFO:
            record.levelno, record.levelname = logging.DEBUG, "DEBUG"
        return logging.getLogger().isEnabledFor(record.levelno)


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, object] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
            "request_id": getattr(record, "request_id", None),
        }
        for key, value in record.__dict__.items():
            if key not in _STANDARD_ATTRIBUTES and not key.startswith("_"):
                entry[key] = value
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        return orjson.dumps(entry, default=str).decode()


TEXT_FORMAT: Final = "%(asctime)s %(levelname)-7s %(name)s [%(request_id)s] %(message)s"


def configure(log_format: LogFormat, level: str = "INFO") -> None:
    """Route the root logger (and uvicorn's, which propagate to it) to stderr in `log_format`.
    `color_message` (uvicorn's ANSI-coloured duplicate of the message) is never emitted."""
    handler = logging.StreamHandler(sys.stderr)
    handler.addFilter(RequestIdFilter())
    formatter = JsonFormatter() if log_format == "json" else logging.Formatter(TEXT_FORMAT)
    handler.setFormatter(formatter)
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)
    for name in ("uvicorn", "uvicorn.error"):
        # Whatever configured uvicorn before (a uvicorn.Config's log_level, a dictConfig that
        # disabled existing loggers), its lines now follow the root's level and handler.
        uvicorn_logger = logging.getLogger(name)
        uvicorn_logger.handlers[:] = []
        uvicorn_logger.propagate = True
        uvicorn_logger.disabled = False
        uvicorn_logger.setLevel(logging.NOTSET)
    # uvicorn's access log stays off: the request metrics count every request. The opt-in
    # access log (PERMITAPI_ACCESS_LOG) is the request middleware's, with the route template
    # and the key id (permitapi.web.request_context).
    access = logging.getLogger("uvicorn.access")
    access.handlers[:] = []
    access.propagate = False
    httpx_logger = logging.getLogger("httpx")
    httpx_logger.filters[:] = [DemoteToDebug()]
