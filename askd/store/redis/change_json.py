"""A change as the commit script and the stream carry it: compact JSON."""

from __future__ import annotations

from typing import Any

from askd.core import Request
from askd.core.approvals import Approval
from askd.core.changes import Approved, Asked, AwayEnded, AwaySet, Change, Ended, Escalated, Extended, Forgot, GroupDeleted, GroupSet, Notified
from askd.core.lifecycle import Trigger
from askd.core.registry.rules import UnknownChange
from askd.protocol import codec
from askd.store.rows import remind_from_json, remind_to_json, steps_from_json, steps_to_json


def _text(value: Any) -> str:
    """The codec's compact UTF-8 JSON, as the text the script and the
    stream take. What nodes wrote before with ``json.dumps`` (spaced,
    ASCII-escaped) reads the same."""
    return codec.dumps(value).decode()


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
        if req.agent is not None:
            out["agent"] = req.agent
        if req.max_extension:
            out["mext"] = repr(req.max_extension)
        if req.on_timeout is not None:
            out["otm"] = _text(req.on_timeout)
        if req.escalate:
            out["esc"] = steps_to_json(req.escalate)
        if req.approval is not None:  # an action to approve: its record, as SQLite keeps it
            out["appr"] = req.approval.to_json().decode()
        if req.remind is not None:
            out["rmd"] = remind_to_json(req.remind)
        if req.host_key_hash is not None:
            out["hk"] = req.host_key_hash
        return _text(out)
    if isinstance(change, GroupSet):
        # members as one JSON string: the script stores it as is (cjson
        # would encode an empty Lua table as an object)
        return _text({"o": node, "q": seq, "t": "g", "g": change.group, "members": _text(change.members)})
    if isinstance(change, GroupDeleted):
        return _text({"o": node, "q": seq, "t": "gd", "g": change.group})
    if isinstance(change, AwaySet):  # an away (protocol section 20): until as a repr string (exact), delegates as one JSON string
        return _text({"o": node, "q": seq, "t": "w", "u": change.user, "at": repr(change.until),
                      "to": _text(change.delegates)})
    if isinstance(change, AwayEnded):
        out = {"o": node, "q": seq, "t": "wd", "u": change.user}
        if change.until is not None:
            out["at"] = repr(change.until)
        return _text(out)
    out = {"o": node, "q": seq, "sid": change.session_id}
    if isinstance(change, Ended):
        out.update(t="e", rid=change.request_id, trigger=change.trigger.value, status=change.status.value,
                   ended=repr(change.ended_at))
        if change.answers is not None:
            out["answers"] = _text(change.answers)
        if change.error is not None:
            out["error"] = change.error
        for name, value in (("by", change.answered_by), ("via", change.via), ("reason", change.reason)):
            if value is not None:
                out[name] = value
        if change.defaulted:
            out["dflt"] = 1
        if change.digest is not None:
            out["dg"] = change.digest
        if change.on_behalf_of is not None:
            out["obo"] = change.on_behalf_of
        if change.counted is not None:  # an action's last approval: against its count
            assert change.approval is not None
            out.update(counted=change.counted, appr=change.approval.to_json().decode())
    elif isinstance(change, Approved):
        # An approval short of the quorum: compare and set on the count.
        out.update(t="v", rid=change.request_id, counted=change.counted, appr=change.approval.to_json().decode())
    elif isinstance(change, Extended):
        # The deadlines as repr strings (exact); the script compares them as numbers.
        out.update(t="x", rid=change.request_id, prev=repr(change.previous), expires=repr(change.expires_at),
                   ext=repr(change.extended), frame=change.frame.decode())
    elif isinstance(change, Notified):
        out.update(t="n", rid=change.request_id)
    elif isinstance(change, Escalated):
        out.update(t="s", rid=change.request_id, step=change.step)
    elif isinstance(change, Forgot):
        out.update(t="f", rid=change.request_id)
    else:
        # A kind the rules know and the script does not: never sent as another.
        raise UnknownChange(f"the Redis store has no step for a change of kind {type(change).__name__}")
    return _text(out)


def from_json(data: dict[str, Any]) -> Change:
    t = data["t"]
    if t == "g":
        return GroupSet(data["g"], tuple(codec.loads(data["members"])))
    if t == "gd":
        return GroupDeleted(data["g"])
    if t == "w":
        return AwaySet(data["u"], float(data["at"]), tuple(codec.loads(data["to"])))
    if t == "wd":
        return AwayEnded(data["u"], float(data["at"]) if "at" in data else None)
    sid, rid = data["sid"], data["rid"]
    if t == "a":
        req = Request(rid, sid, data["uid"], float(data["created"]), float(data["expires"]),
                      idempotency_key=data.get("key"), agent=data.get("agent"))
        req.frame = data["frame"].encode()
        req.max_extension = float(data.get("mext", 0.0))
        req.on_timeout = codec.loads(data["otm"]) if "otm" in data else None
        req.escalate = steps_from_json(data.get("esc"))
        req.approval = Approval.from_json(data["appr"]) if "appr" in data else None
        req.remind = remind_from_json(data.get("rmd"))
        req.host_key_hash = data.get("hk")
        return Asked(req, data.get("parent"))
    if t == "e":
        answers = codec.loads(data["answers"]) if "answers" in data else None
        ended = Ended(
            sid, rid, Trigger(data["trigger"]), answers, data.get("error"), float(data["ended"]),
            data.get("by"), data.get("via"), data.get("reason"), bool(data.get("dflt")), data.get("dg"),
        )
        ended.on_behalf_of = data.get("obo")
        if "counted" in data:
            ended.counted, ended.approval = int(data["counted"]), Approval.from_json(data["appr"])
        return ended
    if t == "v":
        approval = Approval.from_json(data["appr"])
        return Approved(sid, rid, int(data["counted"]), approval.votes[-1], approval)
    if t == "x":
        return Extended(sid, rid, float(data["prev"]), float(data["expires"]), float(data["ext"]), data["frame"].encode())
    if t == "n":
        return Notified(sid, rid)
    if t == "s":
        return Escalated(sid, rid, int(data["step"]))
    return Forgot(sid, rid)
