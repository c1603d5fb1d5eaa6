"""B7, audit export: a daemon serves ``records`` audit records through
``GET /admin/v1/audit`` (NDJSON, then CSV), and its resident memory is read
before, during (the highest of samples every few milliseconds) and after
each export: streamed a page at a time, it should stay flat, whatever the
size of the export.

The trail is filled by askd's own code before the daemon starts, as B5
fills its store: ``Registry`` decides and ``SqliteStore.commit`` writes, so
the records are sealed and chained as the daemon seals them. Half are
asks, half their cancels (a session of ``SESSION`` questions cancelled at
once); the questions are then forgotten, so the daemon starts holding no
question, only the trail. A warm-up export of ``WARMUP`` records of each
format goes first, so one-off costs (code paths, the csv module) do not count.
"""

from __future__ import annotations

import asyncio
import gc
import json
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

from askd import tokens

from bench.common import settle
from bench.payload import QUESTIONS
from bench.proc import SECRET, Server

SESSION = 1000  # questions per session, cancelled together
WARMUP = 1000
SAMPLE_S = 0.005
MB = 1_000_000  # as bench/report.py


async def fill(db: Path, records: int) -> dict[str, Any]:
    """Write ``records`` audit records (asks and their cancels) into a new
    SQLite store at ``db``, and forget the questions."""
    from askd.core import AskInput
    from askd.core.changes import Forgot
    from askd.core.records import Limits
    from askd.core.registry import Registry
    from askd.store.sqlite import SqliteStore

    questions = records // 2
    n = questions + 1
    registry = Registry(
        Limits(max_pending_total=n, max_pending_per_session=n, max_pending_per_agent=n, max_pending_bytes_total=64 << 30)
    )
    store = SqliteStore(db)
    t0 = time.perf_counter()
    try:
        for start in range(0, questions, SESSION):
            sid, user = f"b7-{start // SESSION}", f"u{start // SESSION}"
            asked = []
            for _ in range(start, min(questions, start + SESSION)):
                _, change = registry.prepare_ask(AskInput(sid, user, QUESTIONS, timeout=3600.0))
                assert change is not None
                asked.append(change)
            for phase in (lambda: asked, lambda: registry.prepare_cancel(sid), lambda: [Forgot(sid, a.request.request_id) for a in asked]):
                for change in await store.commit(phase()):
                    registry.apply(change)
        kept = await store.audit.count()
        if kept != questions * 2:
            raise RuntimeError(f"filled {kept} records, expected {questions * 2}")
    finally:
        store.close()
    seconds = time.perf_counter() - t0
    del registry
    gc.collect()
    return {"fill_s": seconds, "db_bytes": sum(p.stat().st_size for p in db.parent.glob(db.name + "*"))}


async def quiet_rss(server: Server) -> int:
    await settle(server)
    await asyncio.sleep(0.2)
    return server.rss()


async def export(server: Server, fmt: str, limit: int) -> dict[str, Any]:
    """One export, read as it streams; the daemon's RSS sampled meanwhile."""
    before = await quiet_rss(server)
    peak, streaming = before, True

    async def sample() -> None:
        nonlocal peak
        while streaming:
            peak = max(peak, server.rss())
            await asyncio.sleep(SAMPLE_S)

    sampler = asyncio.create_task(sample())
    url = f"http://127.0.0.1:{server.admin_port}/admin/v1/audit"
    headers = {"Authorization": f"Bearer {tokens.issue(SECRET, 'admin')}"}
    lines, size, first, last = 0, 0, b"", b""
    t0 = time.perf_counter()
    try:
        async with httpx.AsyncClient(timeout=600) as http:
            async with http.stream("GET", url, params={"format": fmt, "limit": limit}, headers=headers) as r:
                if r.status_code != 200:
                    raise RuntimeError(f"GET /admin/v1/audit: HTTP {r.status_code}: {(await r.aread())[:300]!r}")
                tail = b""
                async for chunk in r.aiter_bytes():
                    size += len(chunk)
                    lines += chunk.count(b"\n")
                    tail = (tail + chunk)[-4096:]
                    if not first:
                        first = chunk
    finally:
        seconds = time.perf_counter() - t0
        streaming = False
        await sampler
    peak = max(peak, server.rss())
    after = await quiet_rss(server)
    rows = tail.rstrip(b"\n").rsplit(b"\n", 1)[-1]
    records = lines - (1 if fmt == "csv" else 0)  # CSV: the header row
    out = {"format": fmt, "records": records, "bytes": size, "seconds": seconds, "rss_before_b": before, "rss_peak_b": peak, "rss_after_b": after}
    if fmt == "jsonl" and records:
        out["first_seq"] = json.loads(first.split(b"\n", 1)[0])["seq"]
        out["last_seq"] = json.loads(rows)["seq"]
    return out


async def audit_export(records: int, **server_kw: Any) -> dict[str, Any]:
    work = Path(tempfile.mkdtemp(prefix="bench-b7-"))
    try:
        state = work / "state"
        filled = await fill(state / "askd.db", records)
        with Server("askd", store="sqlite", state_dir=state, **server_kw) as server:
            rss_start = await quiet_rss(server)
            for fmt in ("jsonl", "csv"):
                await export(server, fmt, min(WARMUP, records))
            runs = [await export(server, fmt, records) for fmt in ("jsonl", "csv")]
        for run in runs:
            if run["records"] != records:
                raise RuntimeError(f"{run['format']}: exported {run['records']} records, expected {records}")
        return {"records": records, **filled, "rss_start_b": rss_start, "runs": runs}
    finally:
        shutil.rmtree(work, ignore_errors=True)


def table(b7: dict[str, Any]) -> tuple[list[str], list[list[str]]]:
    head = ["format", "records", "MB", "seconds", "RSS before MB", "RSS peak during MB", "RSS after MB", "peak - before MB"]
    body = [
        [
            r["format"], f"{r['records']:,}", f"{r['bytes'] / MB:.1f}", f"{r['seconds']:.2f}", f"{r['rss_before_b'] / MB:.1f}",
            f"{r['rss_peak_b'] / MB:.1f}", f"{r['rss_after_b'] / MB:.1f}", f"{(r['rss_peak_b'] - r['rss_before_b']) / MB:+.1f}",
        ]
        for r in b7["runs"]
    ]
    return head, body
