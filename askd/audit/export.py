"""Reading an export back for ``askd audit verify``: NDJSON (one record a
line) or the CSV ``askd audit export --format csv`` writes (protocol
section 19: a header row of the record's fields, ``data`` as JSON text, a
``null`` as an empty cell). A CSV row holds every field of its record, so
each record is rebuilt as the NDJSON line would give it and its hash
checked alike. No daemon code: verify runs offline."""

from __future__ import annotations

import csv
import json
from collections.abc import Iterable, Iterator
from typing import Any

from askd.audit.chain import FIELDS

HEADER = ",".join(FIELDS)


class NotAnExport(ValueError):
    """A line that is neither an NDJSON record nor a CSV row of an export."""


def read_export(lines: Iterable[str]) -> Iterator[dict[str, Any]]:
    """The records of an export, oldest first, whichever of the two formats
    it is: CSV when its first line is the header row."""
    it = iter(lines)
    for first in it:
        if first.strip():
            break
    else:
        return
    if first.rstrip("\r\n") == HEADER:
        yield from _csv_records(it)
        return
    yield from _json_records([first], 1)
    yield from _json_records(it, 2)


def _json_records(lines: Iterable[str], first_line: int) -> Iterator[dict[str, Any]]:
    for n, line in enumerate(lines, first_line):
        if not line.strip():
            continue
        try:
            yield json.loads(line)
        except ValueError:
            raise NotAnExport(f"line {n} is not JSON") from None


def _csv_records(lines: Iterator[str]) -> Iterator[dict[str, Any]]:
    # csv.reader over the remaining lines: a cell may hold a line break
    # (quoted), so rows are counted, not lines.
    for row_number, row in enumerate(csv.reader(lines), 2):
        if not row:
            continue
        if len(row) != len(FIELDS):
            raise NotAnExport(f"CSV row {row_number} has {len(row)} cells, not the header's {len(FIELDS)}")
        record: dict[str, Any] = {name: (cell if cell != "" else None) for name, cell in zip(FIELDS, row, strict=True)}
        try:
            record["seq"] = int(row[0])
            record["data"] = json.loads(row[FIELDS.index("data")]) if record["data"] is not None else None
        except ValueError:
            raise NotAnExport(f"CSV row {row_number} is not an audit record (seq or data unreadable)") from None
        yield record
