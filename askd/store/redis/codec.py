"""A change as the commit script and the stream carry it: compact JSON."""

from __future__ import annotations

import json
from typing import Any

from askd.core import Request
from askd.core.changes import Asked, Change, Ended, Escalated, Forgot, GroupDeleted, GroupSet, Notified
from askd.core.events import encode
from askd.core.lifecycle import Trigger
from askd.store.rows import steps_from_json, steps_to_json


def to_json(change: Change, node: str, seq: int) -> str:
    """A change as the script and the stream carry it (no nulls: Lua's
    cjson turns them into a value that is true)."""
    if isinstance(change, Asked):
        req = change.request
        assert req.frame is not None
        out: dict[str, Any] = {"o": node, "q": seq, "sid": req.session_id}
        out.update(t="a", rid=req.request_id, uid=req.user_id, created=repr(req.created_at),
                   expires=repr(req.expires_at), frame=req.frame.decode())
        if req.idempotency_key is not None:
            out["key"] = req.idempotency_key
        if change.parent_session_id is not None:
            out["parent"] = change.parent_session_id
        if req.escalate:
            out["esc"] = steps_to_json(req.escalate)
        return json.dumps(out, separators=(",", ":"))
    if isinstance(change, GroupSet):
        # members as one JSON string: the script stores it as is (cjson
        # would encode an empty Lua table as an object)
        return json.dumps({"o": node, "q": seq, "t": "g", "g": change.group, "members": json.dumps(change.members)})
    if isinstance(change, GroupDeleted):
        return json.dumps({"o": node, "q": seq, "t": "gd", "g": change.group})
    out = {"o": node, "q": seq, "sid": change.session_id}
    if isinstance(change, Ended):
        out.update(t="e", rid=change.request_id, trigger=change.trigger.value, status=change.status.value,
                   ended=repr(change.ended_at))
        if change.answers is not None:
            out["answers"] = encode(change.answers).decode()
        if change.error is not None:
            out["error"] = change.error
    elif isinstance(change, Notified):
        out.update(t="n", rid=change.request_id)
    elif isinstance(change, Escalated):
        out.update(t="x", rid=change.request_id, step=change.step)
    else:
        out.update(t="f", rid=change.request_id)
    return json.dumps(out, separators=(",", ":"))


def from_json(data: dict[str, Any]) -> Change:
    t = data["t"]
    if t == "g":
        return GroupSet(data["g"], tuple(json.loads(data["members"])))
    if t == "gd":
        return GroupDeleted(data["g"])
    sid, rid = data["sid"], data["rid"]
    if t == "a":
        req = Request(rid, sid, data["uid"], float(data["created"]), float(data["expires"]),
                      idempotency_key=data.get("key"))
        req.frame = data["frame"].encode()
        req.escalate = steps_from_json(data.get("esc"))
        return Asked(req, data.get("parent"))
    if t == "e":
        answers = json.loads(data["answers"]) if "answers" in data else None
        return Ended(sid, rid, Trigger(data["trigger"]), answers, data.get("error"), float(data["ended"]))
    if t == "n":
        return Notified(sid, rid)
    if t == "x":
        return Escalated(sid, rid, int(data["step"]))
    return Forgot(sid, rid)
