"""What B2 and B4 ask: a plain question (the default, the one the floor
also serves), an approval (an ``action`` ask, protocol section 17, which
the user's client approves with an ``approve`` frame) or an approval with
quorum 2 (asked of two users, both approve; the second approval ends it).
The floor has no approvals: askd's figures for those are compared with
askd's own plain case. ``unaudited`` is a plain question asked of askd
started bare (``bench.serve --bare``: no audit records, digests or
receipts; askd has no such setting): what the audit trail and receipts
cost is plain against it."""

from __future__ import annotations

import json
from dataclasses import dataclass

from bench.payload import action_body, answer_frame, approve_frame, ask_body


@dataclass(frozen=True)
class Case:
    name: str
    approvers: int  # users an ask goes to, each of whom replies
    action: bool  # an approval: the reply is ``approve``
    bare: bool = False  # askd started without its audit trail and receipts (bench.serve --bare)

    def body(self, users: list[str]) -> bytes:
        """The ask, of ``users`` (exactly ``approvers`` of them)."""
        if not self.action:
            return ask_body(users[0])
        return action_body(users, quorum=self.approvers)

    def reply(self, session_id: str, request_id: str, frame_id: str) -> bytes:
        """What a user's client sends once it got the ask."""
        if self.action:
            return approve_frame(session_id, request_id, frame_id)
        return answer_frame(session_id, request_id, frame_id)


CASES = {c.name: c for c in (Case("plain", 1, False), Case("approval", 1, True), Case("quorum2", 2, True), Case("unaudited", 1, False, bare=True))}
PLAIN = CASES["plain"]


def ended_by(frame: bytes) -> str | None:
    """The id of the reply this ``ack`` frame acknowledges when that reply
    ended the question (an answer taken; an approval that completed the
    quorum), else None: an earlier approval (approvals < needed) or a refusal."""
    if not frame.startswith(b'{"type":"ack"') or b'"accepted":true' not in frame:
        return None
    ack = json.loads(frame)
    payload = ack.get("payload") or {}
    if "needed" in payload and payload.get("approvals", 0) < payload["needed"]:
        return None
    return str(ack["id"])


def case_names(text: str) -> list[str]:
    """``--case``: a comma list; plain always runs first (the others' reference)."""
    names = [x.strip() for x in text.split(",") if x.strip()]
    unknown = [x for x in names if x not in CASES]
    if unknown:
        raise ValueError(f"unknown case(s): {', '.join(unknown)} (known: {', '.join(CASES)})")
    return ["plain", *dict.fromkeys(x for x in names if x != "plain")]
