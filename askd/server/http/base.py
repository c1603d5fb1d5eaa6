"""What every HTTP handler shares: the token check (``door/auth.py``), JSON in
and out, the spec's error envelope (``errors.py``), and request-scoped log
context."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any, TypeVar

import structlog
import tornado.web
from pydantic import BaseModel, TypeAdapter, ValidationError

from askd.core import ALL_SESSIONS, AskdError
from askd.protocol import codec
from askd.core.events import encode
from askd.protocol.frames import validation_details
from askd.protocol.ids import Id
from askd.server import logs
from askd.server.context import Context
from askd.server.front_door import door
from askd.server.front_door.auth import authenticate
from askd.server.http.errors import CODE_FOR_STATUS, ApiError
from askd.server.logs import get_logger, redact_text
from askd.store import StoreUnavailable
from askd.tokens import Principal

M = TypeVar("M", bound=BaseModel)

log = get_logger("askd.http")

_id_adapter: TypeAdapter[str] = TypeAdapter(Id)


def _buffered(connection: Any) -> int:
    """Bytes already read from the connection's socket and not yet taken
    (Tornado's read buffer): 0 when it cannot tell."""
    stream = getattr(connection, "stream", None)
    return int(getattr(stream, "_read_buffer_size", 0) or 0)


def house_headers(handler: tornado.web.RequestHandler) -> None:
    """On every response: no ``Server`` header naming Tornado's version, and
    with askd's own TLS, HSTS (browsers then never try plain HTTP first).
    Read from the application's settings: this runs before ``initialize``."""
    handler.clear_header("Server")
    if handler.application.settings.get("hsts"):
        handler.set_header("Strict-Transport-Security", "max-age=31536000")


def access_log(handler: tornado.web.RequestHandler) -> None:
    """Tornado's ``log_function``: one ``http.request`` line, token redacted."""
    status = handler.get_status()
    level = "debug" if status < 400 else "info" if status < 500 else "warning"
    if not logs.enabled(level):
        return
    getattr(log, level)(
        "http.request",
        method=handler.request.method,
        path=redact_text(handler.request.uri or ""),
        status=status,
        ms=round(1000 * handler.request.request_time(), 2),
        remote=handler.request.remote_ip,
    )


if TYPE_CHECKING:
    _Handler = tornado.web.RequestHandler
else:
    _Handler = object


class JsonErrors(_Handler):
    """The spec's error envelope and exception mapping, for every handler
    that speaks the API's errors: ``ApiHandler`` and the WebSocket's
    handshake (``WsHandler``). A mixin, first in the bases, so that its
    ``super()`` reaches each handler's own Tornado class (borrowing the
    methods instead made ``super()`` fail: a request that got no answer)."""

    # Close the connection once an error is sent, even with the request read whole.
    close_after_error = False

    def write_error(self, status_code: int, **kwargs: Any) -> None:
        err = kwargs.get("exc_info", (None, None, None))[1]
        if isinstance(err, ApiError):
            code, message, details = err.code, err.message, err.details
        elif isinstance(err, tornado.web.HTTPError):
            code = CODE_FOR_STATUS.get(status_code, "invalid_request" if status_code < 500 else "internal")
            message, details = err.log_message or self._reason, None
        else:
            code, message, details = "internal", "internal error", None
        if details is None and status_code == 400:
            # Every 400 says what is wrong; "" is the request as a whole.
            details = [{"loc": "", "msg": message}]
        body: dict[str, Any] = {"code": code, "message": message}
        if details is not None:
            body["details"] = details
        if self.close_after_error or not getattr(self, "_body_wanted", True):
            # Refused before its body was read (Tornado then closes the
            # connection), or a handler that closes after any error: askd
            # says so, so that no client reuses the connection.
            self.set_header("Connection", "close")
        self.set_header("Content-Type", "application/json; charset=utf-8")
        sent = self.finish(encode({"error": body}))
        if self.close_after_error:
            connection = self.request.connection
            sent.add_done_callback(lambda _: connection.close())  # type: ignore[union-attr]

    def _handle_request_exception(self, e: BaseException) -> None:
        if isinstance(e, AskdError):
            e = ApiError(e.code, e.message, e.details)
        elif isinstance(e, StoreUnavailable):
            e = ApiError("store_unavailable", "askd cannot write to its store right now; nothing was changed, try again")
        if isinstance(e, ApiError):
            if self._finished:
                return
            self.set_status(e.status)
            self.write_error(e.status, exc_info=(type(e), e, None))
            return
        super()._handle_request_exception(e)  # type: ignore[arg-type]


@tornado.web.stream_request_body
class ApiHandler(JsonErrors, tornado.web.RequestHandler):
    """JSON API handler. Subclasses set ``role`` and call ``self.ctx``.

    The body is streamed so that ``prepare`` (the token check, the size
    check) runs as soon as the headers arrive: a request refused there is
    answered and its connection closed with none of its body read.
    """

    role: str | None = None  # None: no token needed

    def initialize(self, ctx: Context) -> None:
        self.ctx = ctx
        self.principal: Principal | None = None
        self._chunks: list[bytes] = []
        self._received = 0  # bytes of body so far
        self._body_wanted = False  # prepare passed: the body is read, the connection kept

    def set_default_headers(self) -> None:
        self.set_header("Content-Type", "application/json; charset=utf-8")
        self.set_header("Cache-Control", "no-store")
        self.set_header("X-Content-Type-Options", "nosniff")
        house_headers(self)

    def prepare(self) -> None:
        structlog.contextvars.clear_contextvars()
        if self.role is not None:
            self.principal = authenticate(self.ctx, self.request, self.role)
            door.prove(self.request.connection)  # a valid token: the connection is no idle stranger's
        length = self._check_length()
        self._body_wanted = True
        if length is None and "Transfer-Encoding" in self.request.headers:
            # A chunked body: data_received counts it and answers askd's 413
            # past the cap; Tornado's own cut (max_body_size) is a bare 400.
            self.request.connection.set_max_body_size(sys.maxsize)  # type: ignore[union-attr]
        if length and _buffered(self.request.connection) >= length:
            # The whole body came with the headers (an agent's usual small
            # POST): no wait is left for the body timeout to bound, and
            # Tornado's timer for it (a timeout handle and two futures per
            # request) is skipped. Any other body keeps it.
            self.request.connection.set_body_timeout(None)  # type: ignore[union-attr,arg-type]

    def _check_length(self) -> int | None:
        """The declared body length (None: chunked or none), refused over the cap."""
        # A chunked body has no length to check here: data_received counts it.
        limit = self.ctx.settings.limits.max_request_bytes
        length = self.request.headers.get("Content-Length")
        if length is None:
            return None
        if not (length.isascii() and length.isdigit()):  # "²" is a digit to str.isdigit
            raise ApiError("invalid_request", "Content-Length must be a number of bytes")
        # Compared as text first: int() refuses more than 4,300 digits.
        digits = length.lstrip("0")
        if len(digits) > len(str(limit)) or int(digits or "0") > limit:
            raise ApiError("too_large", f"request body is over {limit} bytes")
        if len(length) > 20:  # zeros Tornado's own parse (int) would choke on
            raise ApiError("invalid_request", "Content-Length has more than 20 digits")
        return int(digits or "0")

    def data_received(self, chunk: bytes) -> None:
        if self._finished:
            return
        self._received += len(chunk)
        limit = self.ctx.settings.limits.max_request_bytes
        if self._received > limit:
            # Answered now, the rest unread: Tornado closes the connection
            # after the answer, as for a declared length over the cap.
            self._chunks.clear()
            self._body_wanted = False
            self._handle_request_exception(ApiError("too_large", f"request body is over {limit} bytes"))
            return
        self._chunks.append(chunk)

    # ---- input --------------------------------------------------------

    def path_id(self, value: str, name: str) -> str:
        try:
            return _id_adapter.validate_python(value)
        except ValidationError as err:
            # The id's own problem (a length, a hidden character: protocol
            # section 4) under the path parameter's name, as a body's field is.
            problem = err.errors()[0]["msg"].removeprefix("Value error, ")
            message = f"{name} must be 1 to 256 characters, none of them control, bidirectional or zero-width: {problem}"
            raise ApiError("invalid_request", message, [{"loc": name, "msg": problem}]) from None

    def session_id(self, value: str) -> str:
        """A session named in a path or query: never subscribe's wildcard."""
        return self.no_wildcard(self.path_id(value, "sessionId"))

    @staticmethod
    def no_wildcard(sid: str) -> str:
        """A session id already valid (``Id``) that must name one session."""
        if sid == ALL_SESSIONS:
            raise ApiError("invalid_request", f"{ALL_SESSIONS!r} is subscribe's wildcard, never a session id")
        return sid

    def json_body(self, model: type[M], context: dict[str, Any] | None = None) -> tuple[M, dict[str, Any]]:
        """Parse and validate the body; returns the model and the raw object."""
        body = b"".join(self._chunks)
        limit = self.ctx.settings.limits.max_request_bytes
        if len(body) > limit:
            raise ApiError("too_large", f"request body is over {limit} bytes")
        beyond: list[dict[str, Any]] = []
        try:
            raw = codec.loads_bounded(body or b"null")
        except codec.TooDeep:
            raise ApiError("invalid_request", f"request body is nested deeper than {codec.MAX_DEPTH} levels") from None
        except codec.NotIJson as err:  # an integer beyond I-JSON's range: refused below, with its loc
            raw, beyond = err.doc, err.details
        except ValueError as err:
            raise ApiError("invalid_request", f"request body is {codec.not_json(err)}") from None
        if not isinstance(raw, dict):
            raise ApiError("invalid_request", "request body must be a JSON object")
        if beyond:
            raise _invalid_body(beyond)
        try:
            return model.model_validate(raw, context=context), raw
        except ValidationError as err:
            raise _invalid_body(validation_details(err)) from None

    def wait_seconds(self) -> float:
        """``?wait=SEC``: 0 when absent, at most ``limits.max_wait_seconds``."""
        raw = self.get_query_argument("wait", None)
        if raw is None:
            return 0.0
        try:
            value = float(raw)
        except ValueError:
            value = float("nan")
        if not value >= 0 or value == float("inf"):
            raise ApiError("invalid_request", "wait must be a number of seconds >= 0")
        return min(value, self.ctx.settings.limits.max_wait_seconds)

    # ---- output -------------------------------------------------------

    def send_json(self, obj: Any, status: int = 200) -> None:
        self.set_status(status)
        self.finish(encode(obj))  # UTF-8 JSON, lone surrogates escaped


def _invalid_body(details: list[dict[str, Any]]) -> ApiError:
    """``400 invalid_request`` naming the first field at fault (protocol section 5, Errors)."""
    first = details[0]
    more = f" (and {len(details) - 1} more in details)" if len(details) > 1 else ""
    return ApiError("invalid_request", f"invalid request body: {first['loc'] or 'body'}: {first['msg']}{more}", details)
