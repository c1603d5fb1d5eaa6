"""A receipt's payload, in one fixed member order (so every node signs the
same bytes for the same end)."""

from __future__ import annotations

import math
from datetime import datetime, timezone
from typing import Any

ISSUER = "askd"  # ``iss`` when public_url is not set


def rfc3339(ts: float) -> str:
    """Epoch seconds as RFC 3339 UTC to the millisecond, as askd's results show times."""
    return datetime.fromtimestamp(ts, timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def receipt_claims(
    *,
    iss: str | None,
    session_id: str,
    request_id: str,
    status: str,
    by: str | None,
    via: str | None,
    digest: str,
    ended_at: float,
    approval: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The payload of one ended result's receipt.

    ``iat`` is the end time in whole seconds (rounded down), not the time of
    signing: a receipt is then the same bytes on every node and after every
    restart. ``approval`` (for approvals, protocol section 16) holds
    ``approved``, ``scope``, ``approvals`` (the user ids of the people who
    approved, in order) and ``approvalsVia`` (each one's ``via``, in the same
    order: ``ws``, ``link``, ``mcp``, ``admin``)."""
    out: dict[str, Any] = {
        "iss": iss or ISSUER,
        "iat": math.floor(ended_at),
        "sid": session_id,
        "rid": request_id,
        "status": status,
    }
    if approval is not None:
        out["approved"] = approval["approved"]
        out["scope"] = approval.get("scope")
    out["by"] = by
    out["via"] = via
    if approval is not None:
        out["approvals"] = list(approval.get("approvals", ()))
        out["approvalsVia"] = list(approval.get("approvalsVia", ()))
    out["digest"] = digest
    out["endedAt"] = rfc3339(ended_at)
    return out
