"""The bearer token check every listener makes: from the header (or, for a
WebSocket, the ``token`` query argument), verified, not revoked, of the
right role."""

from __future__ import annotations

from typing import Any

from askd.server.context import Context
from askd.server.http.errors import ApiError
from askd.tokens import Principal, TokenError, verify


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
    if revoked(ctx, principal):
        raise ApiError("unauthorized", "token was issued before auth.not_before (revoked); get a new one")
    if principal.role != role:
        raise ApiError("forbidden", f"this API needs a token of role {role}, not {principal.role}")
    return principal


def revoked(ctx: Context, principal: Principal) -> bool:
    """Issued before ``auth.not_before`` (a token without ``iat`` counts as
    issued at the epoch)."""
    return bool(ctx.not_before) and (principal.iat or 0) < ctx.not_before
