"""Tokens: HS256 JWTs with ``sub``, ``role`` and optional ``exp`` (spec section 2)."""

from __future__ import annotations

import hashlib
import secrets
import time
from collections import OrderedDict
from dataclasses import dataclass
from typing import Literal

import jwt

from askd.protocol.visible import refusal

Role = Literal["user", "agent", "admin"]
ROLES: tuple[str, ...] = ("user", "agent", "admin")
ALGORITHM = "HS256"


class TokenError(Exception):
    """The token is missing, malformed, forged, expired or lacks a claim."""


@dataclass(frozen=True, slots=True)
class Principal:
    role: Role
    sub: str | None
    iat: float | None = None  # issued at (seconds since the epoch), checked against auth.not_before
    exp: float | None = None  # when it stops being good: askd closes a WebSocket that used it then


def bad_sub(sub: str) -> bool:
    """A user id is shown on the page and written to logs, and must look like
    no other: no control, bidirectional or zero-width character (as every
    ``Id``, protocol section 4)."""
    return not sub or len(sub) > 256 or refusal(sub) is not None


def issue(secret: str, role: Role, sub: str | None = None, ttl: float | None = None) -> str:
    if role not in ROLES:
        raise ValueError(f"role must be one of {', '.join(ROLES)}")
    if role == "user" and not sub:
        raise ValueError("a user token needs a sub (the user id)")
    if sub is not None and bad_sub(sub):
        raise ValueError("a sub is 1 to 256 characters, none of them bidirectional, zero-width or control characters")
    # iat to the millisecond: a token minted just after `askd token revoke-all`
    # (auth.not_before, also to the millisecond) is not taken for an older one.
    claims: dict[str, object] = {"role": role, "iat": round(time.time(), 3)}
    if sub:
        claims["sub"] = sub
    if ttl is not None:
        claims["exp"] = int(time.time() + ttl)
    return jwt.encode(claims, secret, algorithm=ALGORITHM)


def verify(secret: str, token: str) -> Principal:
    # HS256 checking costs far more than the rest of a WebSocket upgrade, and
    # a reconnect storm presents the same tokens again: good ones are
    # remembered (the last CACHE_SIZE used). Failures raise and so are never
    # cached. The key is a digest of the secret and the token, not a copy of
    # the token: 250 bytes less per cached token (docs/performance.md, B3).
    key = _cache_key(secret, token)
    hit = _cache.get(key)
    if hit is None:
        hit = _cache[key] = _verified(secret, token)
        if len(_cache) > CACHE_SIZE:
            _cache.popitem(last=False)
    else:
        _cache.move_to_end(key)
    principal, exp = hit
    # A cached success is re-checked against the clock: only `exp` can turn
    # a good token bad with time (iat and nbf only turn bad ones good).
    if exp is not None and exp <= time.time():
        raise TokenError("token expired")
    return principal


CACHE_SIZE = 8192
_cache: OrderedDict[bytes, tuple[Principal, int | None]] = OrderedDict()


def _cache_key(secret: str, token: str) -> bytes:
    return hashlib.sha256(b"%d:%s%s" % (len(secret), secret.encode(), token.encode(errors="surrogatepass"))).digest()


def _plain(err: jwt.InvalidTokenError) -> str:
    """PyJWT's reason ("Not enough segments") in words a person acts on."""
    if isinstance(err, jwt.InvalidSignatureError):
        return "invalid token: it was not signed with this askd's secret (made for another askd, or the secret changed)"
    if isinstance(err, jwt.ImmatureSignatureError):
        return "invalid token: it is not valid yet (is this machine's clock right?)"
    if isinstance(err, jwt.MissingRequiredClaimError):
        return "invalid token: it is a JWT but not an askd token (it has no role)"
    if isinstance(err, jwt.InvalidAlgorithmError):
        return "invalid token: it is not signed with HS256 as askd's tokens are"
    return "invalid token: it is not a valid askd token; it was cut or mistyped"


def _verified(secret: str, token: str) -> tuple[Principal, int | None]:
    try:
        # algorithms pins HS256: "none" and every other algorithm are refused.
        claims = jwt.decode(token, secret, algorithms=[ALGORITHM], options={"require": ["role"]})
    except jwt.ExpiredSignatureError:
        raise TokenError("token expired: mint a new one") from None
    except jwt.InvalidTokenError as err:
        raise TokenError(_plain(err)) from None
    role, sub = claims.get("role"), claims.get("sub")
    if role not in ROLES:
        raise TokenError("invalid token: unknown role")
    if sub is not None and (not isinstance(sub, str) or bad_sub(sub)):
        raise TokenError("invalid token: bad sub")
    if role == "user" and not sub:
        raise TokenError("invalid token: a user token needs a sub")
    exp, iat = claims.get("exp"), claims.get("iat")
    exp = int(exp) if exp is not None else None
    return Principal(role, sub, float(iat) if isinstance(iat, (int, float)) else None, exp), exp


# ---- one-time codes: how `askd open` hands a browser its token -------------
#
# A code is signed like a token but is not one (it has no role, so verify()
# refuses it): it names the user and the token's lifetime, lives a minute
# and is exchanged once for a user token (POST /v1/open). So the token
# itself never appears on a command line or in a URL the browser keeps.
# The code does, on the browser's command line, where any local process
# can read it: a minute is what a browser needs to start, and little for
# anyone else. Its `iat` is checked against auth.not_before, as a token's.

OPEN_CODE_TYPE = "askd-open"
OPEN_CODE_SECONDS = 60.0


@dataclass(frozen=True, slots=True)
class OpenCode:
    sub: str
    ttl: float | None  # of the token it is exchanged for
    jti: str  # its one use is recorded under this
    exp: float
    iat: float  # when it was made, checked against auth.not_before


def issue_open_code(secret: str, sub: str, ttl: float | None, lifetime: float = OPEN_CODE_SECONDS) -> str:
    if bad_sub(sub):
        raise ValueError("a sub is 1 to 256 characters, none of them bidirectional, zero-width or control characters")
    now = time.time()
    # iat to the millisecond, as a token's (auth.not_before is too).
    claims: dict[str, object] = {
        "typ": OPEN_CODE_TYPE, "sub": sub, "jti": secrets.token_urlsafe(16), "iat": round(now, 3), "exp": int(now + lifetime)
    }
    if ttl:
        claims["ttl"] = ttl
    return jwt.encode(claims, secret, algorithm=ALGORITHM)


def read_open_code(secret: str, code: str) -> OpenCode:
    """The code's claims; ``TokenError`` when it is forged, expired or not a code."""
    try:
        claims = jwt.decode(code, secret, algorithms=[ALGORITHM], options={"require": ["typ", "sub", "jti", "iat", "exp"]})
    except jwt.ExpiredSignatureError:
        raise TokenError("this link has expired; run `askd open` again") from None
    except jwt.InvalidTokenError:
        raise TokenError("this is not an askd link code") from None
    sub, ttl, jti = claims["sub"], claims.get("ttl"), claims["jti"]
    if claims["typ"] != OPEN_CODE_TYPE or not isinstance(sub, str) or bad_sub(sub) or not isinstance(jti, str):
        raise TokenError("this is not an askd link code")
    if ttl is not None and not (isinstance(ttl, (int, float)) and ttl > 0):
        raise TokenError("this is not an askd link code")
    return OpenCode(sub, float(ttl) if ttl else None, jti, float(claims["exp"]), float(claims["iat"]))
