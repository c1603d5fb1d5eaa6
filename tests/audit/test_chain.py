"""The audit chain (protocol section P): hashes recomputed here with
``rfc8785``, and verify naming each kind of tampering."""

from __future__ import annotations

import copy
import hashlib
from typing import Any

import rfc8785

from askd.audit.chain import ZERO, seal, verify


def chain(n: int, start: int = 1, prev: str = ZERO) -> list[dict[str, Any]]:
    out = []
    for seq in range(start, start + n):
        body = {"at": f"2026-12-02T10:00:{seq % 60:02d}.000Z", "event": "asked", "sessionId": "s1",
                "requestId": f"r{seq}", "by": None, "via": "agent", "data": {"to": ["alice"], "audience": ["alice"]}}
        rec = seal(body, seq, prev)
        prev = rec["hash"]
        out.append(rec)
    return out


def test_the_hash_is_sha256_of_jcs_without_hash_and_links_to_the_one_before() -> None:
    records = chain(3)
    for i, rec in enumerate(records):
        body = {k: v for k, v in rec.items() if k != "hash"}
        assert rec["hash"] == hashlib.sha256(rfc8785.dumps(body)).hexdigest()
        assert rec["prev"] == (ZERO if i == 0 else records[i - 1]["hash"])
    checked = verify(records)
    assert checked.problem is None and (checked.count, checked.first, checked.last) == (3, 1, 3)


def test_a_changed_record_is_named() -> None:
    records = chain(5)
    records[2]["data"]["to"] = ["mallory"]
    assert verify(records).problem == "record seq 3 was changed: its hash does not match its content"


def test_a_removed_record_is_named() -> None:
    records = chain(5)
    del records[2]
    problem = verify(records).problem
    assert problem is not None and problem.startswith("record seq 3 was removed: seq 2 is followed by seq 4")
    # One session, alice in every audience: it could be a filtered export too, and the line says so.
    assert "The export looks filtered" in problem


def test_a_reordered_record_is_named() -> None:
    records = chain(5)
    records[1], records[2] = records[2], records[1]
    assert verify(records).problem == "record seq 2 was reordered: seq 3 comes before it"


def test_an_inserted_record_is_named() -> None:
    records = chain(5)
    forged = seal({k: v for k, v in records[2].items() if k not in ("seq", "prev", "hash")}, 3, records[1]["hash"])
    forged["event"] = "cancelled"
    forged = seal({k: v for k, v in forged.items() if k not in ("seq", "prev", "hash")}, 3, records[1]["hash"])
    records.insert(2, forged)
    assert verify(records).problem == "a record was inserted at seq 3: seq 3 appears twice"
    # re-sealed with its own seq and the rest renumbered: the next record no longer links
    renumbered = copy.deepcopy(records[:3]) + [
        {**r, "seq": r["seq"] + 1} for r in records[3:]
    ]
    assert verify(renumbered).problem == "record seq 4 was changed: its hash does not match its content"


def test_a_chain_starting_after_seq_1_verifies() -> None:
    records = chain(10)[4:]
    checked = verify(records)
    assert checked.problem is None and (checked.first, checked.last) == (5, 10)


def test_seq_1_must_follow_zeros() -> None:
    records = chain(2, prev="1" * 64)
    assert verify(records).problem == "record seq 1 was changed: seq 1 must follow 64 zeros"


def test_filtered_checks_each_record_alone() -> None:
    records = chain(6)[::2]
    assert verify(records).problem is not None
    assert verify(records, filtered=True).problem is None
    records[1]["by"] = "mallory"
    assert verify(records, filtered=True).problem == "record seq 3 was changed: its hash does not match its content"
