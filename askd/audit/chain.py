"""Sealing and checking audit records: ``hash`` is the SHA-256 hex of the
JCS (RFC 8785) of the record without ``hash``; ``prev`` the hash before it
(64 zeros for seq 1).

Imports nothing of the daemon (only ``canonical``, RFC 8785, from
``askd.receipts.digest``), so ``askd audit verify`` checks a file offline.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from askd.receipts.digest import canonical

ZERO = "0" * 64
FIELDS = ("seq", "at", "event", "sessionId", "requestId", "by", "via", "data", "prev", "hash")


def hash_of(record: Mapping[str, Any]) -> str:
    """The hash a record should carry (its own ``hash`` left out)."""
    body = {k: v for k, v in record.items() if k != "hash"}
    return hashlib.sha256(canonical(body)).hexdigest()


def seal(body: Mapping[str, Any], seq: int, prev: str) -> dict[str, Any]:
    """A record from a body (``at``, ``event``, ids, ``by``, ``via``,
    ``data``) at ``seq`` after the record hashed ``prev``."""
    record = {"seq": seq, **body, "prev": prev}
    record["hash"] = hash_of(record)
    return record


@dataclass
class Checked:
    """What a check found: ``problem`` None when the chain holds."""

    count: int = 0
    first: int | None = None
    last: int | None = None
    last_hash: str | None = None
    problem: str | None = None
    hashes: dict[int, str] | None = None  # seq -> hash, to match a signed head


def verify(records: Iterable[Mapping[str, Any]], *, filtered: bool = False) -> Checked:
    """Check each record's own hash and, unless ``filtered``, that each
    links to the one before with the next seq. Names the first record that
    was changed, removed (a gap in seq), inserted or reordered. A chain may
    start after seq 1 (retention pruned its front): its first ``prev`` is
    then taken on trust, and only a signed head or an older copy anchors it."""
    out = Checked(hashes={})
    rows = list(records)
    prev_seq: int | None = None
    prev_hash: str | None = None
    for n, rec in enumerate(rows):
        seq = rec.get("seq") if isinstance(rec, Mapping) else None
        if not isinstance(seq, int) or isinstance(seq, bool) or not isinstance(rec.get("hash"), str):
            out.problem = f"line {n + 1}: not an audit record"
            return out
        if hash_of(rec) != rec["hash"]:
            out.problem = f"record seq {seq} was changed: its hash does not match its content"
            return out
        if not filtered:
            out.problem = _link_problem(rows, n, seq, rec, prev_seq, prev_hash)
            if out.problem:
                if out.problem.endswith(f"is followed by seq {seq}"):  # a gap: removed, or filtered out
                    out.problem += _filtered_hint(rows)
                return out
        out.count += 1
        out.first = seq if out.first is None else out.first
        out.last, out.last_hash = seq, rec["hash"]
        out.hashes[seq] = rec["hash"]
        prev_seq, prev_hash = seq, rec["hash"]
    return out


def _link_problem(
    rows: list[Mapping[str, Any]], n: int, seq: int, rec: Mapping[str, Any], prev_seq: int | None, prev_hash: str | None
) -> str | None:
    if prev_seq is None:
        if seq == 1 and rec.get("prev") != ZERO:
            return "record seq 1 was changed: seq 1 must follow 64 zeros"
        return None
    want = prev_seq + 1
    if seq == prev_seq:
        return f"a record was inserted at seq {seq}: seq {seq} appears twice"
    if seq < prev_seq:
        return f"record seq {seq} was reordered: it comes after seq {prev_seq}"
    if seq > want:
        later = {r.get("seq") for r in rows[n + 1 :] if isinstance(r, Mapping)}
        if want in later:
            return f"record seq {want} was reordered: seq {seq} comes before it"
        return f"record seq {want} was removed: seq {prev_seq} is followed by seq {seq}"
    if rec.get("prev") != prev_hash:
        return f"record seq {seq} was inserted or re-sealed: it does not link to seq {prev_seq}"
    return None


def _filtered_hint(rows: list[Mapping[str, Any]]) -> str:
    """What to add to "record seq N was removed" when the whole file reads as
    an export by ``--session`` or ``--user`` (protocol section 19): every
    record intact on its own, seq rising, and one session throughout, or one
    user in the audience of every question the file asks. A removal from a
    full export of such a trail reads the same, so verify still fails, and
    the line names both."""
    seqs: list[int] = []
    for rec in rows:
        seq = rec.get("seq") if isinstance(rec, Mapping) else None
        if not isinstance(seq, int) or isinstance(seq, bool) or rec.get("hash") != hash_of(rec):
            return ""
        if seqs and seq <= seqs[-1]:
            return ""
        seqs.append(seq)
    sessions = {rec.get("sessionId") for rec in rows}
    if len(sessions) != 1 and not _one_user_throughout(rows):
        return ""
    gaps = sum(1 for a, b in zip(seqs, seqs[1:]) if b != a + 1)
    return (
        f". The export looks filtered: its {len(seqs)} records are each intact, with {gaps} "
        f"{'gap' if gaps == 1 else 'gaps'} in seq. An export by --session or --user is checked with "
        "`askd audit verify --filtered FILE` (each record alone); a full export with a gap had records removed"
    )


def _one_user_throughout(rows: list[Mapping[str, Any]]) -> bool:
    """A user in the audience of every question the file holds an ``asked``
    record of (its ``audience``, and the users its ``escalated`` records added)."""
    audiences: dict[Any, set[Any]] = {}
    for rec in rows:
        data = rec.get("data") if isinstance(rec.get("data"), Mapping) else {}
        added = data.get("audience") if rec.get("event") == "asked" else data.get("added") if rec.get("event") == "escalated" else None
        if isinstance(added, list):
            audiences.setdefault(rec.get("requestId"), set()).update(u for u in added if isinstance(u, str))
    return bool(audiences) and bool(set.intersection(*audiences.values()))
