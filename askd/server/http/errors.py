"""The spec's error codes and their HTTP statuses, as one exception every
handler raises and ``ApiHandler.write_error`` renders as the error envelope."""

from __future__ import annotations

from typing import Any

STATUS = {
    "invalid_request": 400,
    "invalid_answer": 400,
    "unauthorized": 401,
    "forbidden": 403,
    "not_found": 404,
    "not_pending": 404,
    "method_not_allowed": 405,
    "session_owner_mismatch": 409,
    "not_allowed": 409,
    "already_voted": 409,
    "user_offline": 409,
    "too_large": 413,
    "too_many_pending": 429,
    "too_many_connections": 429,
    "internal": 500,
    "shutting_down": 503,
    "store_unavailable": 503,
}
CODE_FOR_STATUS = {401: "unauthorized", 403: "forbidden", 404: "not_found", 405: "method_not_allowed", 413: "too_large"}


class ApiError(Exception):
    def __init__(self, code: str, message: str, details: Any = None, status: int | None = None) -> None:
        super().__init__(message)
        self.code, self.message, self.details = code, message, details
        self.status = status or STATUS[code]
