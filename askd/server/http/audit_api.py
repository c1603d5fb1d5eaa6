"""The audit trail over HTTP (protocol section 19): ``GET /admin/v1/audit``
(NDJSON or CSV, streamed a page at a time, so memory does not grow with the
export), ``GET /admin/v1/audit/head`` (signed with the receipts key) and
``GET /v1/me/history`` (a person's own past, user token)."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import AsyncIterator
from datetime import datetime, timezone
from typing import Any

from askd.audit.chain import FIELDS, ZERO
from askd.audit.history import PastQuestion
from askd.core.events import isotime
from askd.protocol.history import HistoryEntry
from askd.receipts import sign
from askd.server.context import Context
from askd.server.http.base import ApiError, ApiHandler
from askd.store.parts import AuditTrail

PAGE = 1000
DEFAULT_LIMIT = 1000
MAX_LIMIT = 100_000


def trail_of(ctx: Context) -> AuditTrail:
    trail = ctx.hub.store.audit
    if trail is None:
        raise ApiError("invalid_request", f"store {ctx.hub.store_kind!r} keeps no audit trail yet")
    return trail


async def records(trail: AuditTrail, after_seq: int = 0) -> AsyncIterator[dict[str, Any]]:
    """Every record after ``after_seq``, oldest first, a page at a time."""
    while True:
        page = await trail.page(after_seq, PAGE)
        for rec in page:
            yield rec
        if len(page) < PAGE:
            return
        after_seq = page[-1]["seq"]


def _reaches(rec: dict[str, Any], user: str, theirs: set[str]) -> bool:
    """Whether ``rec`` is of a question whose audience (its ``asked`` and
    ``escalated`` records, in order before it) includes ``user``."""
    rid, data = rec["requestId"], rec.get("data") or {}
    if rec["event"] == "asked" and user in (data.get("audience") or ()):
        theirs.add(rid)
    elif rec["event"] == "escalated" and user in (data.get("added") or ()):
        theirs.add(rid)
    return rid in theirs


class _AdminHandler(ApiHandler):
    role = "admin"


class AuditHandler(_AdminHandler):
    def _time(self, name: str) -> str | None:
        value = self.get_query_argument(name, None)
        if value is None:
            return None
        try:
            at = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            raise ApiError("invalid_request", f"{name} must be an RFC 3339 time") from None
        if at.tzinfo is None:
            raise ApiError("invalid_request", f"{name} must name its offset (Z or +hh:mm)")
        return isotime(at.astimezone(timezone.utc).timestamp())

    def _int(self, name: str, default: int) -> int:
        value = self.get_query_argument(name, None)
        if value is None:
            return default
        if not value.isdigit() or len(value) > 12:
            raise ApiError("invalid_request", f"{name} must be a whole number")
        return int(value)

    async def get(self) -> None:
        since, until = self._time("since"), self._time("until")
        after_seq, limit = self._int("after_seq", 0), self._int("limit", DEFAULT_LIMIT)
        if limit > MAX_LIMIT:
            raise ApiError("invalid_request", f"limit is at most {MAX_LIMIT}")
        fmt = self.get_query_argument("format", "jsonl")
        if fmt not in ("jsonl", "ndjson", "csv"):
            raise ApiError("invalid_request", "format is jsonl or csv")
        session, user = self.get_query_argument("session", None), self.get_query_argument("user", None)
        trail = trail_of(self.ctx)
        csv_out = fmt == "csv"
        self.set_header("Content-Type", "text/csv; charset=utf-8" if csv_out else "application/x-ndjson")
        buf, theirs, sent = io.StringIO(), set[str](), 0
        writer = csv.writer(buf, lineterminator="\n") if csv_out else None
        if writer is not None:
            writer.writerow(FIELDS)
        async for rec in records(trail, after_seq):
            if sent >= limit:
                break
            if user is not None and not _reaches(rec, user, theirs):
                continue
            if (since is not None and rec["at"] < since) or (until is not None and rec["at"] >= until):
                continue
            if session is not None and rec["sessionId"] != session:
                continue
            sent += 1
            if writer is not None:
                writer.writerow([_cell(name, rec.get(name)) for name in FIELDS])
            else:
                buf.write(json.dumps(rec, separators=(",", ":"), ensure_ascii=False))
                buf.write("\n")
            if buf.tell() >= 64 * 1024:
                self.write(buf.getvalue().encode())
                buf.seek(0)
                buf.truncate()
                await self.flush()
        self.finish(buf.getvalue().encode())


def _cell(name: str, value: Any) -> str:
    if value is None:
        return ""
    if name == "data":
        return json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    return str(value)


class AuditHeadHandler(_AdminHandler):
    async def get(self) -> None:
        head = await trail_of(self.ctx).head() or {"seq": 0, "hash": ZERO, "at": None}
        self.send_json({**head, "signature": sign(head, self.ctx.receipts.keys)})


class HistoryHandler(ApiHandler):
    """``GET /v1/me/history``: the last questions that ended with the user
    in their audience, newest first (the store's history index of the
    trail: each end's record and its question's title; with the answers
    while the daemon still keeps them)."""

    role = "user"

    async def get(self) -> None:
        user = self.principal.sub if self.principal is not None else None
        if user is None:
            raise ApiError("forbidden", "a user token names its user (sub)")
        ended = await trail_of(self.ctx).history(user)
        self.send_json({"questions": [self._entry(e) for e in ended]})

    def _entry(self, ended: PastQuestion) -> HistoryEntry:
        rec = ended.record
        sid, rid = rec["sessionId"], rec["requestId"]
        req = self.ctx.hub.get(sid, rid)
        kept = req.result() if req is not None and not req.pending else {}
        status = "cancelled" if rec["event"] == "withdrawn" else rec["event"]
        return {
            "sessionId": sid,
            "requestId": rid,
            "header": ended.title,  # the history index's: the trail's records hold no text
            "status": status,
            "answers": kept.get("answers"),
            "answeredBy": rec["by"] if status in ("answered", "declined") else None,
            "via": rec["via"],
            "endedAt": rec["at"],
        }


def admin_routes(ctx: Context) -> list[tuple[str, type, dict[str, Any]]]:
    return [
        (r"/admin/v1/audit", AuditHandler, {"ctx": ctx}),
        (r"/admin/v1/audit/head", AuditHeadHandler, {"ctx": ctx}),
    ]


def public_routes(ctx: Context) -> list[tuple[str, type, dict[str, Any]]]:
    return [(r"/v1/me/history", HistoryHandler, {"ctx": ctx})]
