"""Which change yields which audit records (protocol section 19).

A store calls :func:`bodies` for each change that took effect, in the same
transaction (or script) that wrote it, and seals what it returns with the
next seq: a change that took no effect records nothing. Answer texts are
never copied: an end's ``digest`` (the receipt's) binds them.
"""

from __future__ import annotations

from typing import Any

from askd.core.changes import Approved, Asked, Change, Ended, Escalated, Extended
from askd.core.events import isotime
from askd.core.lifecycle import WITHDRAW_ERROR, Trigger
from askd.core.records import audience_entries
from askd.protocol import codec

_END_EVENTS = {Trigger.ANSWER: "answered", Trigger.DECLINE: "declined", Trigger.EXPIRE: "timeout"}


def _body(at: float, event: str, sid: str, rid: str, by: str | None, via: str | None, data: dict[str, Any]) -> dict[str, Any]:
    return {"at": isotime(at), "event": event, "sessionId": sid, "requestId": rid, "by": by, "via": via, "data": data}


def _action_name(change: Asked) -> str | None:
    req = change.request
    if req.approval is None or req.frame is None:
        return None
    action = codec.loads(req.frame).get("payload", {}).get("action")
    return action.get("name") if isinstance(action, dict) else None


def bodies(change: Change, at: float) -> list[dict[str, Any]]:
    """The records ``change`` yields, unsealed (no seq, prev, hash), ``at``
    the commit's instant; [] for a change the trail does not keep
    (``Notified``, ``Forgot``, groups)."""
    if isinstance(change, Asked):
        req = change.request
        to = list(audience_entries(req.user_id))
        data: dict[str, Any] = {"to": to, "audience": sorted(change.audience) if change.audience is not None else to}
        name = _action_name(change)
        if name is not None:
            data["action"] = name
        return [_body(at, "asked", req.session_id, req.request_id, req.agent, change.via, data)]
    if isinstance(change, Ended):
        sid, rid = change.session_id, change.request_id
        if change.trigger == Trigger.CANCEL:
            event = "withdrawn" if change.error == WITHDRAW_ERROR else "cancelled"
            return [_body(at, event, sid, rid, change.actor, change.actor_via, {"digest": change.digest})]
        event = _END_EVENTS[change.trigger]
        if change.trigger == Trigger.EXPIRE:
            return [_body(at, event, sid, rid, None, None, {"digest": change.digest, "defaulted": change.defaulted})]
        return [_body(at, event, sid, rid, change.answered_by, change.via, {"digest": change.digest, "defaulted": False})]
    if isinstance(change, Approved):
        vote = change.vote
        return [_body(at, "approved", change.session_id, change.request_id, vote.by, vote.via, {})]
    if isinstance(change, Extended):
        data = {"seconds": round(change.expires_at - change.previous, 3), "expiresAt": isotime(change.expires_at)}
        return [_body(at, "extended", change.session_id, change.request_id, change.by, change.via, data)]
    if isinstance(change, Escalated):
        data = {"step": change.step, "added": list(change.added)}
        return [_body(at, "escalated", change.session_id, change.request_id, None, None, data)]
    return []

