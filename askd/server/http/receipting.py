"""Receipts on results (protocol section 16): every ended result the daemon
sends carries ``receipt``, signed here, once per ended question.

The core keeps no key: it records each end's ``digest`` (taken while the
questions were still held); this adds the signature when a result is
serialized. ``iat`` is the end time, so the receipt is the same bytes on
every node sharing the key and after a restart: a cache, not a record.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

from askd.core import Request, Status
from askd.receipts import Keyring, receipt_claims, sign
from askd.server.logs import get_logger

log = get_logger("askd.receipts")

# Ended results kept with their receipt: a question asked again for its
# result (a wait that ends, a GET, a replayed ask) is not signed again.
CACHE_SIZE = 4096


class Receipts:
    def __init__(self, keys: Keyring, issuer: str | None) -> None:
        self.keys = keys
        self.issuer = issuer  # public_url, or None ("askd")
        self.jwks = keys.jwks()
        self._cache: OrderedDict[tuple[str, str], tuple[float, str]] = OrderedDict()

    def receipt(self, req: Request) -> str | None:
        """The ended request's receipt; None while pending, for a question
        that ended before askd kept digests (its questions are gone) or
        without one (its content had no canonical JSON, ``core/digests.py``),
        and when signing fails (logged)."""
        if req.pending or req.digest is None or req.ended_at is None:
            return None
        key = (req.session_id, req.request_id)
        hit = self._cache.get(key)
        if hit is not None and hit[0] == req.ended_at:
            self._cache.move_to_end(key)
            return hit[1]
        try:
            claims = receipt_claims(
                iss=self.issuer,
                session_id=req.session_id,
                request_id=req.request_id,
                status=req.status.value,
                by=req.answered_by,
                via=req.via,
                digest=req.digest,
                ended_at=req.ended_at,
                approval=_approval(req),
            )
            token = sign(claims, self.keys)
        except Exception:
            # The question ended, durable, whatever its receipt: one that
            # cannot be signed leaves the result without ``receipt``
            # (docs/decisions.md, "What no value may stop"), never the reply a 500.
            log.exception("receipt.sign_failed", sessionId=req.session_id, requestId=req.request_id)
            return None
        self._cache[key] = (req.ended_at, token)
        if len(self._cache) > CACHE_SIZE:
            self._cache.popitem(last=False)
        return token

    def result(self, req: Request) -> dict[str, Any]:
        """``req.result()`` as the wire has it: with ``receipt`` once ended."""
        out = req.result()
        token = self.receipt(req)
        if token is not None:
            out["receipt"] = token
        return out


def _approval(req: Request) -> dict[str, Any] | None:
    """An action's claims (protocol section 16): approved, the scope granted,
    the people who approved and through what. An approval that names nobody
    (a shared link or an admin without a ``sub``, which only a quorum of 1
    takes) lists no one: a receipt's ``approvals`` are people, never null."""
    if req.approval is None:
        return None
    approved = req.status is Status.ANSWERED
    people = [v for v in req.approval.votes if v.by is not None]
    return {
        "approved": approved,
        "scope": req.approval.scope if approved else None,
        "approvals": [v.by for v in people],
        "approvalsVia": [v.via for v in people],
    }
