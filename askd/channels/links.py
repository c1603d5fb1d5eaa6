"""Answer links (``{public_url}/a/{T}``): minting and reading ``T``.

``T`` names one question (session and request id), one recipient (a user
id, or none for a link posted to a shared channel) and, for a one-tap link,
one option by its index in the question's options, and the link epoch it
was minted in (see :func:`epoch_of`). It carries no user token
and grants nothing but answering or declining that question as that
recipient. It is sealed with AES-SIV under a key derived from askd's
secret for links only, so whoever sees a link (a chat channel, a forwarded
mail, a proxy's log) reads none of those ids, and nothing but askd can
make one: a link is never a JWT and a JWT is never a link.

Shared by the daemon's page (``askd.server.http.link_page``) and every channel
that hands links out (webhooks, e-mail).
"""

from __future__ import annotations

import base64
import binascii
import functools
import hmac
import json
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESSIV
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from askd.protocol import codec

if TYPE_CHECKING:
    from askd.core import Request

PURPOSE = b"askd.answer-link"  # HKDF's info: this key seals links and nothing else
# The first byte of every T, in the clear and bound as associated data: a
# later format can tell itself apart, and no byte of T can be changed unnoticed.
_VERSION = b"\x02"  # 1 was the unencrypted, itsdangerous-signed form
PATH = "a"  # links live at {public_url}/a/{T}
# On an action to approve (protocol section 17) a link's option names the decision it
# opens with: the question it names tells an approval from a question, so the
# claim (and T's format) stay as they are. Opening one never decides: only
# the page's POST does, as for a one-tap answer.
APPROVE, DENY = 0, 1
CHOICES = (APPROVE, DENY)
_BASE64URL = re.compile(r"[A-Za-z0-9_-]+")


@dataclass(frozen=True, slots=True)
class LinkClaim:
    """What a valid ``T`` names."""

    session_id: str
    request_id: str
    user_id: str | None  # None: a shared channel's link, answeredBy null
    option: int | None  # a one-tap link's option index; None: the question link
    epoch: int = 0  # the link epoch it was minted in: older than the current one, it is dead


def epoch_of(not_before: float) -> int:
    """The link epoch of a revocation instant (``auth.not_before``, moved by
    ``askd token revoke-all``), in whole milliseconds: a link minted in an
    epoch older than the current one names nothing. The instant is kept in
    the store, shared by every node and across restarts, so the epoch is too."""
    return round(not_before * 1000) if not_before > 0 else 0


def _dumps(value: Any) -> bytes:
    """Compact JSON with every non-ASCII character escaped: an id may hold
    any character, a lone surrogate too, and the payload must still encode.
    The standard library's, not the codec's: the codec writes UTF-8, and a
    link minted from the same answer must stay the same text."""
    return json.dumps(value, separators=(",", ":")).encode("ascii")


@functools.lru_cache(maxsize=4)
def _aead(secret: str) -> AESSIV:
    # 64 bytes: AES-SIV's two AES-256 keys (one for the tag, one for the text).
    hkdf = HKDF(algorithm=hashes.SHA256(), length=64, salt=None, info=PURPOSE)
    return AESSIV(hkdf.derive(secret.encode("utf-8", "surrogatepass")))


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _seal(secret: str, value: Any) -> str:
    """Any JSON value, sealed as a ``T`` (no nonce: SIV is deterministic,
    so one claim is always one link)."""
    return _b64(_VERSION + _aead(secret).encrypt(_dumps(value), [_VERSION]))


def _open(secret: str, token: str) -> Any:
    """The JSON value ``token`` seals, or None when it is not one askd sealed."""
    if not _BASE64URL.fullmatch(token):
        return None
    try:
        data = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
    except (binascii.Error, ValueError):
        return None
    # Base64 leaves spare bits in a last character: a token with one of them
    # flipped decodes to the same bytes. Only the exact minted text counts.
    if not hmac.compare_digest(_b64(data), token):
        return None
    if data[:1] != _VERSION:
        return None
    try:
        return codec.loads(_aead(secret).decrypt(data[1:], [_VERSION]))
    except (InvalidTag, ValueError):
        return None


def mint(
    secret: str, session_id: str, request_id: str, user_id: str | None, option: int | None = None, epoch: int = 0
) -> str:
    """The opaque ``T`` for one question, one recipient and maybe one option,
    in link epoch ``epoch`` (left out while it is 0: the links of an askd
    never revoked read as they did before epochs)."""
    claim: list[Any] = [session_id, request_id, user_id, option]
    return _seal(secret, claim + [epoch] if epoch else claim)


def read(secret: str, token: str) -> LinkClaim | None:
    """The claim ``token`` makes, or None when it is forged, altered or not
    a link at all (the caller answers every None with the same 404)."""
    payload = _open(secret, token)
    if not (isinstance(payload, list) and len(payload) in (4, 5)):
        return None
    session_id, request_id, user_id, option, *rest = payload
    epoch = rest[0] if rest else 0
    if isinstance(epoch, bool) or not isinstance(epoch, int) or epoch < 0:
        return None
    if not (isinstance(session_id, str) and isinstance(request_id, str)):
        return None
    if user_id is not None and not isinstance(user_id, str):
        return None
    if option is not None and (isinstance(option, bool) or not isinstance(option, int) or option < 0):
        return None
    return LinkClaim(session_id, request_id, user_id, option, epoch)


def url(public_base: str, token: str) -> str:
    return f"{public_base.rstrip('/')}/{PATH}/{token}"


def one_tap_labels(questions: Sequence[dict[str, Any]]) -> list[str]:
    """The options one-tap links are made for: those of an ask of one
    question with options; none otherwise (several questions need the form)."""
    if len(questions) != 1:
        return []
    return [str(o["label"]) for o in questions[0].get("options") or [] if isinstance(o, dict) and "label" in o]


def link_set(public_base: str, secret: str, req: Request, user_id: str | None, epoch: int = 0) -> dict[str, Any]:
    """``{"open": URL, "options": [{"label", "url"}, ...]}`` for one
    recipient (None: a shared channel) of a pending question; an action to
    approve has no options but ``approve`` and ``deny``, its page opened
    with that decision chosen."""
    sid, rid = req.session_id, req.request_id
    if req.approval is not None:
        return {
            "open": url(public_base, mint(secret, sid, rid, user_id, None, epoch)),
            "options": [],
            "approve": url(public_base, mint(secret, sid, rid, user_id, APPROVE, epoch)),
            "deny": url(public_base, mint(secret, sid, rid, user_id, DENY, epoch)),
        }
    return {
        "open": url(public_base, mint(secret, sid, rid, user_id, None, epoch)),
        "options": [
            {"label": label, "url": url(public_base, mint(secret, sid, rid, user_id, i, epoch))}
            for i, label in enumerate(one_tap_labels(req.questions))
        ],
    }


def links_for(public_base: str, secret: str, req: Request, users: Iterable[str], epoch: int = 0) -> dict[str, dict[str, Any]]:
    """Each user's :func:`link_set`, keyed by user id."""
    return {user: link_set(public_base, secret, req, user, epoch) for user in users}


@dataclass(frozen=True, slots=True)
class Minter:
    """How a running daemon's channels mint links: its page's public base,
    its secret, and the current epoch, asked at each mint (``revoke-all``
    moves it while the daemon runs)."""

    public_base: str
    secret: str
    epoch: Callable[[], int]

    def link_set(self, req: Request, user_id: str | None) -> dict[str, Any]:
        return link_set(self.public_base, self.secret, req, user_id, self.epoch())

    def links_for(self, req: Request, users: Iterable[str]) -> dict[str, dict[str, Any]]:
        return links_for(self.public_base, self.secret, req, users, self.epoch())

    def channel_links(self, req: Request, users: Sequence[str]) -> dict[str, Any] | None:
        """The links a shared channel's message carries (a Slack channel, a
        Teams card): they name the recipient only when there is one. None
        for an action needing more than one person's approval: a message
        everyone in the channel sees is no person's, so it never fills a
        quorum seat (protocol section 17); it then carries only the inbox's
        button, where each person approves as themself."""
        if req.approval is not None and req.approval.quorum > 1:
            return None
        return self.link_set(req, users[0] if len(users) == 1 else None)
