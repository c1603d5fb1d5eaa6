"""Reading an export back (``askd.audit.export``): the CSV the daemon writes
gives the records its NDJSON gives, so both verify; and a gap in a file
whose records are each intact is said to look filtered."""

from __future__ import annotations

import csv
import io
import json
from typing import Any

import pytest

from askd.audit.chain import FIELDS, ZERO, seal, verify
from askd.audit.export import HEADER, NotAnExport, read_export
from askd.server.http.audit_api import _cell


def chain(n: int, everyone: bool = False) -> list[dict[str, Any]]:
    """Asks of bob (of a different person each, when ``everyone``) and their answers."""
    out, prev = [], ZERO
    for seq in range(1, n + 1):
        whom = [f"u{seq}"] if everyone else ["bob"]
        body = {
            "at": f"2026-12-07T10:00:{seq:02d}.000Z", "event": "asked" if seq % 2 else "answered",
            "sessionId": f"s{seq % 3}", "requestId": f"r{seq}", "by": None if seq % 2 else "bob, \"the\" reviewer",
            "via": None if seq % 2 else "ws", "data": {"to": whom, "audience": whom, "note": "a,b\nc", "n": seq},
        }
        rec = seal(body, seq, prev)
        prev = rec["hash"]
        out.append(rec)
    return out


def as_csv(records: list[dict[str, Any]]) -> str:
    """As the daemon writes ``format=csv`` (its own cell function)."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(FIELDS)
    for rec in records:
        writer.writerow([_cell(name, rec.get(name)) for name in FIELDS])
    return buf.getvalue()


def test_a_csv_export_reads_back_as_the_records_it_was_written_from() -> None:
    records = chain(6)
    text = as_csv(records)
    assert text.splitlines()[0] == HEADER
    back = list(read_export(io.StringIO(text)))
    assert back == records
    assert verify(back).problem is None


def test_ndjson_still_reads_and_a_bad_line_is_named() -> None:
    records = chain(3)
    text = "".join(json.dumps(r) + "\n" for r in records)
    assert list(read_export(io.StringIO("\n" + text))) == records
    with pytest.raises(NotAnExport, match="line 3 is not JSON"):
        list(read_export(io.StringIO(json.dumps(records[0]) + "\n\nnot json\n")))


def test_a_changed_csv_cell_is_named_as_a_changed_record() -> None:
    text = as_csv(chain(4)).replace('"bob, ""the"" reviewer"', "mallory", 1)
    assert verify(read_export(io.StringIO(text))).problem == "record seq 2 was changed: its hash does not match its content"


def test_a_row_of_another_shape_is_refused() -> None:
    with pytest.raises(NotAnExport, match="CSV row 2 has 3 cells"):
        list(read_export(io.StringIO(HEADER + "\n1,2,3\n")))


def test_a_gap_in_records_each_intact_looks_filtered() -> None:
    records = [r for r in chain(9) if r["sessionId"] == "s1"]  # seq 1, 4, 7: as --session s1 exports
    problem = verify(records).problem
    assert problem is not None
    assert problem.startswith("record seq 2 was removed: seq 1 is followed by seq 4. The export looks filtered: ")
    assert "its 3 records are each intact, with 2 gaps in seq" in problem
    assert "`askd audit verify --filtered FILE`" in problem
    assert verify(records, filtered=True).problem is None


def test_a_gap_with_a_changed_record_elsewhere_does_not_look_filtered() -> None:
    records = chain(6)
    del records[2]
    records[4]["by"] = "mallory"
    assert verify(records).problem == "record seq 3 was removed: seq 2 is followed by seq 4"


def test_a_gap_in_a_trail_of_several_sessions_and_people_does_not_look_filtered() -> None:
    records = chain(6, everyone=True)  # each question asked of someone else: no --user export holds them all
    del records[2]
    assert verify(records).problem == "record seq 3 was removed: seq 2 is followed by seq 4"
