"""B5, start-up: how long ``askd serve`` takes to serve again with
``questions`` pending questions kept in its SQLite store, and the memory
that holding them costs, against a memory-store daemon holding the same.

The store is filled by askd's own code (``Registry.prepare_ask`` decides
each ask and ``SqliteStore.commit`` writes it, ``batch`` asks per commit),
with the payload every scenario sends and one session per question, as B3.
Each start is timed from the process's start until ``/healthz`` answers
200, then until the daemon serves what it restored: the first and the last
question in their sessions' pending lists (the agent API) and the admin
stats counting every one of them. Then a daemon on each store is started
empty and asked the same number of questions over HTTP: the memory store's
is what the restored daemon's memory is compared with; the SQLite one's
tells the store's own cost from the restore's. RSS is read once a daemon
is quiet (``settle``)."""

from __future__ import annotations

import asyncio
import gc
import json
import os
import shutil
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.common import admin, ask_all, settle
from bench.payload import QUESTIONS
from bench.proc import Server
from bench.wire import http_connect

# Long enough that no question times out while the benchmark runs.
FILL_TIMEOUT_S = 3600.0
FILL_BATCH = 1000


def session_of(i: int) -> tuple[str, str]:
    """The session and user of the ``i``-th question: one session each."""
    return f"b5-{i}", f"u{i}"


async def fill(db: Path, questions: int, batch: int = FILL_BATCH) -> dict[str, Any]:
    """Write ``questions`` pending questions into a new SQLite store at ``db``
    through the registry and the store, as the daemon writes them."""
    from askd.core import AskInput
    from askd.core.registry import Registry
    from askd.core.records import Limits
    from askd.store.sqlite import SqliteStore

    n = questions + 1
    registry = Registry(
        Limits(
            max_pending_total=n, max_pending_per_session=n, max_pending_per_agent=n,
            max_pending_bytes_per_agent=64 << 30, max_user_share_per_agent=1.0, max_pending_bytes_total=64 << 30,
        )
    )
    store = SqliteStore(db)
    t0 = time.perf_counter()
    try:
        for start in range(0, questions, batch):
            changes = []
            for i in range(start, min(questions, start + batch)):
                sid, user = session_of(i)
                _, change = registry.prepare_ask(AskInput(sid, user, QUESTIONS, timeout=FILL_TIMEOUT_S))
                assert change is not None
                changes.append(change)
            for change in await store.commit(changes):
                registry.apply(change)
        if registry.stats()["pending"] != questions:
            raise RuntimeError(f"filled {registry.stats()['pending']} questions, expected {questions}")
    finally:
        store.close()  # checkpoints the WAL into the file, as a clean stop does
    seconds = time.perf_counter() - t0
    del registry
    gc.collect()
    return {"fill_s": seconds, "db_bytes": sum(p.stat().st_size for p in db.parent.glob(db.name + "*"))}


def evict(path: Path) -> bool:
    """Drop ``path``'s clean pages from the page cache (no root needed), so
    the next start reads the store from the disk. False where unsupported."""
    if not hasattr(os, "posix_fadvise"):
        return False
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)
    return True


async def healthz(server: Server) -> None:
    http = await http_connect(server.port)
    try:
        status, body = await http.request("GET", "/healthz", b"", b"")
    finally:
        http.close()
    if status != 200:
        raise RuntimeError(f"/healthz got HTTP {status}: {body[:300]!r}")


async def serves(server: Server, questions: int) -> None:
    """The daemon serves what it holds: the first and the last question in
    their sessions' pending lists, and every one counted."""
    http = await http_connect(server.port)
    try:
        for i in sorted({0, questions - 1}):
            sid, _ = session_of(i)
            status, body = await http.request("GET", f"/v1/sessions/{sid}/questions", server.agent_auth, b"")
            if status != 200 or len(json.loads(body)["pending"]) != 1:
                raise RuntimeError(f"session {sid}: HTTP {status}, {body[:300]!r}")
    finally:
        http.close()
    pending = (await admin(server, "GET", "/admin/v1/stats"))["pending"]
    if pending != questions:
        raise RuntimeError(f"{server.store}: {pending} pending after start, expected {questions}")


async def start(state_dir: Path | None, store: str, questions: int, **server_kw: Any) -> tuple[Server, dict[str, float]]:
    """Start a daemon and time it: to askd.json, to /healthz, to serving
    ``questions`` (0: just /healthz). The caller stops it."""
    server = Server("askd", store=store, state_dir=state_dir, **server_kw)
    try:
        await healthz(server)
        healthy = time.perf_counter() - server.started_at
        if questions:
            await serves(server, questions)
        served = time.perf_counter() - server.started_at
    except BaseException:
        server.stop()
        raise
    return server, {"listening_s": server.listening_s, "healthz_s": healthy, "served_s": served}


async def quiet_rss(server: Server) -> int:
    await settle(server)
    await asyncio.sleep(0.2)
    return server.rss()


async def startup(questions: int, starts: int = 3, cold: bool = True, **server_kw: Any) -> dict[str, Any]:
    work = Path(tempfile.mkdtemp(prefix="bench-b5-"))
    try:
        state = work / "state"
        db = state / "askd.db"
        filled = await fill(db, questions)

        runs = []
        for k in range(starts + (1 if cold else 0)):
            evicted = cold and k == starts and evict(db)  # the last start: the store's file not in the page cache
            server, run = await start(state, "sqlite", questions, **server_kw)
            with server:
                run["rss_b"] = await quiet_rss(server)
                run["cold"] = evicted
            runs.append(run)
        warm = [r for r in runs if not r["cold"]]
        sqlite = {
            **filled,
            "runs": runs,
            "served_s": statistics.median(r["served_s"] for r in warm),
            "served_max_s": max(r["served_s"] for r in warm),
            "healthz_s": statistics.median(r["healthz_s"] for r in warm),
            "served_cold_s": next((r["served_s"] for r in runs if r["cold"]), None),
            "rss_b": statistics.median(r["rss_b"] for r in warm),
        }
        # Each store started empty, then asked as many over HTTP: what the
        # restore is compared with, and what an empty daemon of each holds.
        memory: dict[str, Any] = {}
        for store, out in (("sqlite", sqlite), ("memory", memory)):
            server, run = await start(work / f"empty-{store}", store, 0, **server_kw)
            with server:
                out["empty_served_s"] = run["served_s"]
                out["rss_empty_b"] = await quiet_rss(server)
                t0 = time.perf_counter()
                await ask_all(server, [session_of(i) for i in range(questions)])
                out["ask_s"] = time.perf_counter() - t0
                await serves(server, questions)
                out["rss_asked_b"] = await quiet_rss(server)
        memory["rss_b"] = memory["rss_asked_b"]
        return {"questions": questions, "sqlite": sqlite, "memory": memory}
    finally:
        shutil.rmtree(work, ignore_errors=True)
