"""The clock survives anything (``askd/server/hub/deadlines.py``):
a question whose end raises at its deadline stops no other deadline, on a
quiet daemon and after a restart on the same SQLite state, is retried with
a backoff until it ends, and ``/healthz`` reports it meanwhile (protocol
section 6).

Before, the timer died with the exception: every later deadline waited for
some other ask to arm it again (22 s past its expiry, after a restart)."""

from __future__ import annotations

import asyncio
import json
import time
from datetime import datetime
from io import StringIO
from pathlib import Path
from typing import Any

import httpx
import pytest

from askd.core import Request
from askd.core.registry import deadlines
from askd.server.hub.deadlines import REARM_SECONDS
from tests.conftest import RunningDaemon, running_daemon

# How late a deadline may fire on a busy machine and still be "on time".
ON_TIME = 0.5


@pytest.fixture
def planted(monkeypatch: pytest.MonkeyPatch) -> set[str]:
    """Request ids whose end raises at their deadline, through the function
    that raised in the finding (the timeout's digest)."""
    failing: set[str] = set()
    real = deadlines.ended_digest

    def ended_digest(req: Request, answers: Any) -> str | None:
        if req.request_id in failing:
            raise OverflowError("int too large to convert to float")
        return real(req, answers)

    monkeypatch.setattr(deadlines, "ended_digest", ended_digest)
    return failing


def epoch(iso: str) -> float:
    return datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp()


async def ends_on_time(d: RunningDaemon, session: str, asked: dict[str, Any]) -> None:
    """The agent waiting on it hears ``timeout`` within ON_TIME of its expiry."""
    r = await d.result(session, asked["requestId"], wait=5)
    assert r.json()["status"] == "timeout", r.text
    assert time.time() - epoch(asked["expiresAt"]) < ON_TIME


async def health(d: RunningDaemon, url: str | None = None, **kw: Any) -> httpx.Response:
    return await d.http.get(f"{url or d.admin_url}/healthz", **kw)


def failed_lines(log_text: StringIO) -> list[dict[str, Any]]:
    return [e for e in map(json.loads, log_text.getvalue().splitlines()) if e.get("event") == "deadline.failed"]


async def test_a_failing_deadline_stops_no_other_and_healthz_reports_it_until_it_ends(
    daemon: RunningDaemon, planted: set[str], log_text: StringIO
) -> None:
    bad = await daemon.ask("bad", "alice", timeoutSeconds=0.3)
    planted.add(bad["requestId"])
    innocent = [await daemon.ask(f"ok{i}", "bob", timeoutSeconds=0.6 + 0.4 * i) for i in range(2)]
    # A quiet daemon: no ask, no answer, nothing arms the timer but the timer.
    for i, asked in enumerate(innocent):
        await ends_on_time(daemon, f"ok{i}", asked)
    assert (await daemon.result("bad", bad["requestId"])).json()["status"] == "pending"

    r = await health(daemon)
    body = r.json()
    assert r.status_code == 200 and body["status"] == "degraded", body  # not 503: this node still serves
    assert body["deadlines"]["failing"] == 1 and body["deadlines"]["since"] >= epoch(bad["expiresAt"])
    assert "deadline" in body["reason"]
    public = await health(daemon, daemon.url)
    assert (public.status_code, public.json()) == (200, {"status": "degraded"})
    lines = failed_lines(log_text)
    assert lines and all((e["level"], e["kind"], e["sessionId"], e["requestId"]) == ("error", "timeout", "bad", bad["requestId"]) for e in lines)
    assert [e["attempt"] for e in lines] == list(range(1, len(lines) + 1)) and "OverflowError" in lines[0]["exception"]

    planted.clear()  # mended: the next try (at most 2 s away by now) ends it
    assert (await daemon.result("bad", bad["requestId"], wait=5)).json()["status"] == "timeout"
    body = (await health(daemon)).json()
    assert body["status"] == "ok" and body["deadlines"] == {"failing": 0, "since": None}, body


async def test_after_a_restart_a_failing_deadline_stops_no_other(tmp_path: Path, planted: set[str], log_text: StringIO) -> None:
    async with running_daemon(tmp_path, "sqlite", {}, None) as d:
        bad = await d.ask("bad", "alice", timeoutSeconds=0.3)
        innocent = await d.ask("ok", "bob", timeoutSeconds=1.5)
    planted.add(bad["requestId"])
    await asyncio.sleep(max(0.0, epoch(bad["expiresAt"]) + 0.1 - time.time()))  # it passed while no daemon ran
    async with running_daemon(tmp_path, "sqlite", {}, None) as d:
        # At start its end raises at once; the other's deadline still comes.
        await ends_on_time(d, "ok", innocent)
        assert (await d.result("bad", bad["requestId"])).json()["status"] == "pending"
        assert (await health(d)).json()["deadlines"]["failing"] == 1
        assert failed_lines(log_text)[0]["requestId"] == bad["requestId"]
        planted.clear()
        assert (await d.result("bad", bad["requestId"], wait=5)).json()["status"] == "timeout"


async def test_whatever_the_clock_raises_the_timer_is_armed_again(
    daemon: RunningDaemon, monkeypatch: pytest.MonkeyPatch, log_text: StringIO
) -> None:
    """Past the registry's own guard: the clock's firing itself raising (a
    bug anywhere in ``due``) is logged, and the timer fires again a second
    later (no hot loop, no timer left unarmed); both questions then end."""
    registry = daemon.daemon.hub.registry
    real, calls = registry.due, []

    def due() -> Any:
        calls.append(time.time())
        if len(calls) == 1:
            raise RuntimeError("a bug in the clock")
        return real()

    monkeypatch.setattr(registry, "due", due)
    first = await daemon.ask("s1", "alice", timeoutSeconds=0.3)
    second = await daemon.ask("s2", "alice", timeoutSeconds=0.6)
    for session, asked in (("s1", first), ("s2", second)):
        assert (await daemon.result(session, asked["requestId"], wait=5)).json()["status"] == "timeout"
    assert time.time() - epoch(first["expiresAt"]) < REARM_SECONDS + ON_TIME
    assert calls[1] - calls[0] >= REARM_SECONDS * 0.9  # retried after a pause, not at once
    [line] = [e for e in map(json.loads, log_text.getvalue().splitlines()) if e.get("event") == "deadline.clock_failed"]
    assert line["level"] == "error" and "RuntimeError" in line["exception"]
