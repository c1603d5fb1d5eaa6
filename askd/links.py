"""Answer links (``{public_url}/a/{T}``): minting and reading ``T``.

``T`` is signed with itsdangerous under its own salt, so its key is derived
from askd's secret for this purpose only: a link is never a JWT (other key,
two segments, not three) and a JWT is never a link. It names one question
(session and request id), one recipient (a user id, or none for a link
posted to a shared channel) and, for a one-tap link, one option by its
index in the question's options. It carries no user token and grants
nothing but answering or declining that question as that recipient.

Shared by the daemon's page (``askd.server.link_page``) and every channel
that hands links out (webhooks, e-mail).
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from itsdangerous import BadData, URLSafeSerializer

from askd.core import Request

SALT = "askd.answer-link"
_VERSION = 1  # the first item of every payload: a later format can tell itself apart
PATH = "a"  # links live at {public_url}/a/{T}


@dataclass(frozen=True, slots=True)
class LinkClaim:
    """What a valid ``T`` names."""

    session_id: str
    request_id: str
    user_id: str | None  # None: a shared channel's link, answeredBy null
    option: int | None  # a one-tap link's option index; None: the question link


class _AsciiJSON:
    """Compact JSON with every non-ASCII character escaped: an id may hold
    any character, a lone surrogate too, and the payload must still encode."""

    dumps = staticmethod(functools.partial(json.dumps, separators=(",", ":")))
    loads = staticmethod(json.loads)


def _serializer(secret: str) -> URLSafeSerializer:
    return URLSafeSerializer(
        secret,
        salt=SALT,
        serializer=_AsciiJSON,
        signer_kwargs={"key_derivation": "hmac", "digest_method": hashlib.sha256},
    )


def mint(secret: str, session_id: str, request_id: str, user_id: str | None, option: int | None = None) -> str:
    """The opaque ``T`` for one question, one recipient and maybe one option."""
    return str(_serializer(secret).dumps([_VERSION, session_id, request_id, user_id, option]))


def read(secret: str, token: str) -> LinkClaim | None:
    """The claim ``token`` makes, or None when it is forged, altered or not
    a link at all (the caller answers every None with the same 404)."""
    serializer = _serializer(secret)
    try:
        payload = serializer.loads(token)
    except (BadData, ValueError, TypeError):
        return None
    # Base64 leaves spare bits in a last character: a token with one of them
    # flipped decodes to the same bytes. Only the exact minted text counts.
    if not hmac.compare_digest(str(serializer.dumps(payload)).encode(), token.encode("utf-8", "replace")):
        return None
    if not (isinstance(payload, list) and len(payload) == 5 and payload[0] == _VERSION):
        return None
    _, session_id, request_id, user_id, option = payload
    if not (isinstance(session_id, str) and isinstance(request_id, str)):
        return None
    if user_id is not None and not isinstance(user_id, str):
        return None
    if option is not None and (isinstance(option, bool) or not isinstance(option, int) or option < 0):
        return None
    return LinkClaim(session_id, request_id, user_id, option)


def url(public_base: str, token: str) -> str:
    return f"{public_base.rstrip('/')}/{PATH}/{token}"


def one_tap_labels(questions: Sequence[dict[str, Any]]) -> list[str]:
    """The options one-tap links are made for: those of an ask of one
    question with options; none otherwise (several questions need the form)."""
    if len(questions) != 1:
        return []
    return [str(o["label"]) for o in questions[0].get("options") or [] if isinstance(o, dict) and "label" in o]


def link_set(public_base: str, secret: str, req: Request, user_id: str | None) -> dict[str, Any]:
    """``{"open": URL, "options": [{"label", "url"}, ...]}`` for one
    recipient (None: a shared channel) of a pending question."""
    sid, rid = req.session_id, req.request_id
    return {
        "open": url(public_base, mint(secret, sid, rid, user_id)),
        "options": [
            {"label": label, "url": url(public_base, mint(secret, sid, rid, user_id, i))}
            for i, label in enumerate(one_tap_labels(req.questions))
        ],
    }


def links_for(public_base: str, secret: str, req: Request, users: Iterable[str]) -> dict[str, dict[str, Any]]:
    """Each user's :func:`link_set`, keyed by user id."""
    return {user: link_set(public_base, secret, req, user) for user in users}
