"""What every HTTP handler shares: the token check, JSON in and out, the
spec's error envelope, and request-scoped log context."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, TypeVar

import structlog
import tornado.web
from pydantic import BaseModel, TypeAdapter, ValidationError

from askd.core import ALL_SESSIONS, AskdError, codec
from askd.core.events import encode
from askd.core.frames import validation_details
from askd.core.models import Id
from askd.server.hub import Hub
from askd.server import logs
from askd.server.logs import get_logger, redact_text
from askd.server.pinger import Pinger
from askd.store import StoreUnavailable
from askd.tokens import Principal, TokenError, verify

M = TypeVar("M", bound=BaseModel)

log = get_logger("askd.http")

STATUS = {
    "invalid_request": 400,
    "invalid_answer": 400,
    "unauthorized": 401,
    "forbidden": 403,
    "not_found": 404,
    "not_pending": 404,
    "method_not_allowed": 405,
    "session_owner_mismatch": 409,
    "user_offline": 409,
    "too_large": 413,
    "too_many_pending": 429,
    "too_many_connections": 429,
    "internal": 500,
    "shutting_down": 503,
    "store_unavailable": 503,
}
_CODE_FOR_STATUS = {401: "unauthorized", 403: "forbidden", 404: "not_found", 405: "method_not_allowed", 413: "too_large"}

_id_adapter: TypeAdapter[str] = TypeAdapter(Id)


class ApiError(Exception):
    def __init__(self, code: str, message: str, details: Any = None, status: int | None = None) -> None:
        super().__init__(message)
        self.code, self.message, self.details = code, message, details
        self.status = status or STATUS[code]


@dataclass
class Context:
    """Everything handlers share, passed to each as ``initialize(ctx=...)``."""

    hub: Hub
    secret: str
    settings: Any  # askd.config.Settings
    version: str
    pinger: Pinger  # keeps every WebSocket alive
    ports: dict[str, int] = field(default_factory=dict)  # as bound (a port of 0 picks one)
    public_origin: str | None = None  # the origin of settings.public_url


def bearer_token(request: Any, allow_query: bool = False) -> str | None:
    header = request.headers.get("Authorization", "")
    if header[:7].lower() == "bearer " and header[7:].strip():
        return header[7:].strip()
    if allow_query:
        values = request.query_arguments.get("token")
        if values:
            return values[-1].decode("utf-8", "replace")
    return None


def authenticate(ctx: Context, request: Any, role: str, allow_query: bool = False) -> Principal:
    """401 for a missing or bad token, 403 for a good one of another role."""
    token = bearer_token(request, allow_query)
    if token is None:
        raise ApiError("unauthorized", "missing bearer token")
    try:
        principal = verify(ctx.secret, token)
    except TokenError as err:
        raise ApiError("unauthorized", str(err)) from None
    if principal.role != role:
        raise ApiError("forbidden", f"this API needs a token of role {role}, not {principal.role}")
    return principal


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


class ApiHandler(tornado.web.RequestHandler):
    """JSON API handler. Subclasses set ``role`` and call ``self.ctx``."""

    role: str | None = None  # None: no token needed

    def initialize(self, ctx: Context) -> None:
        self.ctx = ctx
        self.principal: Principal | None = None

    def set_default_headers(self) -> None:
        self.set_header("Content-Type", "application/json; charset=utf-8")
        self.set_header("Cache-Control", "no-store")
        self.set_header("X-Content-Type-Options", "nosniff")

    def prepare(self) -> None:
        structlog.contextvars.clear_contextvars()
        if self.role is not None:
            self.principal = authenticate(self.ctx, self.request, self.role)

    # ---- input --------------------------------------------------------

    def path_id(self, value: str, name: str) -> str:
        try:
            return _id_adapter.validate_python(value)
        except ValidationError:
            raise ApiError("invalid_request", f"{name} must be 1 to 256 printable characters") from None

    def session_id(self, value: str) -> str:
        """A session named in a path or query: never subscribe's wildcard."""
        sid = self.path_id(value, "sessionId")
        if sid == ALL_SESSIONS:
            raise ApiError("invalid_request", f"{ALL_SESSIONS!r} is subscribe's wildcard, never a session id")
        return sid

    def json_body(self, model: type[M], context: dict[str, Any] | None = None) -> tuple[M, dict[str, Any]]:
        """Parse and validate the body; returns the model and the raw object."""
        limit = self.ctx.settings.limits.max_request_bytes
        if len(self.request.body) > limit:
            raise ApiError("too_large", f"request body is over {limit} bytes")
        try:
            raw = codec.loads(self.request.body or b"null")
        except (ValueError, RecursionError):
            raise ApiError("invalid_request", "request body is not valid JSON") from None
        if not isinstance(raw, dict):
            raise ApiError("invalid_request", "request body must be a JSON object")
        try:
            return model.model_validate(raw, context=context), raw
        except ValidationError as err:
            details = validation_details(err)
            where = ", ".join(d["loc"] or "body" for d in details[:5])
            raise ApiError("invalid_request", f"invalid request body: {where}", details) from None

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

    def write_error(self, status_code: int, **kwargs: Any) -> None:
        err = kwargs.get("exc_info", (None, None, None))[1]
        if isinstance(err, ApiError):
            code, message, details = err.code, err.message, err.details
        elif isinstance(err, tornado.web.HTTPError):
            code = _CODE_FOR_STATUS.get(status_code, "invalid_request" if status_code < 500 else "internal")
            message, details = err.log_message or self._reason, None
        else:
            code, message, details = "internal", "internal error", None
        if details is None and status_code == 400:
            # Every 400 says what is wrong; "" is the request as a whole.
            details = [{"loc": "", "msg": message}]
        body: dict[str, Any] = {"code": code, "message": message}
        if details is not None:
            body["details"] = details
        self.set_header("Content-Type", "application/json; charset=utf-8")
        self.finish(encode({"error": body}))

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


class NotFoundHandler(ApiHandler):
    """Every unknown path: a JSON 404 (no token needed to learn nothing)."""

    def prepare(self) -> None:
        raise ApiError("not_found", f"no such path: {self.request.path}")


class HealthHandler(ApiHandler):
    def get(self) -> None:
        hub = self.ctx.hub
        body = {
            "status": "degraded" if hub.degraded else "ok",
            "version": self.ctx.version,
            "time": time.time(),
            "store": hub.store.kind,
            "node": hub.node_id,
        }
        if hub.degraded:
            body["reason"] = "the store refuses writes"
        self.send_json(body, 503 if hub.degraded else 200)
