"""Where askd's microseconds go: each piece of one round trip (an ask,
pushed, answered, the ask's reply) timed on its own, in this process, with
the same payload as the benchmarks. The figures complement the servers' CPU
per round (B2): they say which part of askd's cost over the floor is which.

    python -m bench.breakdown [--n 20000]

Pieces are timed in a tight loop, so their caches are warm: inside the
daemon, between other work, each costs more (the SQLite commit about twice,
docs/performance.md).
"""

from __future__ import annotations

import argparse
import io
import tempfile
import time
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

import structlog

from askd import tokens
from askd.audit.trail import Head
from askd.core.digests import ended_digest
from askd.protocol import codec
from askd.protocol.frames import parse_frame
from askd.protocol.models import AskBody
from askd.core import AskInput
from askd.core.registry import Registry
from askd.receipts import keyring
from askd.server import logs
from askd.server.http.receipting import Receipts
from askd.store.sqlite import SqliteStore
from bench.payload import ANSWER, QUESTIONS, answer_frame, ask_body

SECRET = "bench-secret-0123456789abcdef-0123456789abcdef"


def done(coro: Coroutine[Any, Any, Any]) -> Any:
    """Run a coroutine that never suspends (the SQLite store's commit) without
    an event loop's task around it."""
    try:
        coro.send(None)
    except StopIteration as stop:
        return stop.value
    raise RuntimeError("the coroutine suspended")


def per_call(fn: Callable[[], Any], n: int) -> float:
    """Microseconds per call: the best of three runs of ``n`` calls."""
    fn()
    best = float("inf")
    for _ in range(3):
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        best = min(best, time.perf_counter() - t0)
    return best / n * 1e6


def pieces(n: int) -> list[tuple[str, int, float]]:
    """(piece, calls per round, microseconds per call)."""
    out: list[tuple[str, int, float]] = []
    token = tokens.issue(SECRET, "agent")
    out.append(("token check, cached (agent's POST; the tab's was checked at connect)", 1, per_call(lambda: tokens.verify(SECRET, token), n)))
    user_token = tokens.issue(SECRET, "user", "u-1")
    uncached = tokens._verified  # the HS256 check itself, as for a token not seen before (no cache)
    out.append(("token check, not cached (a connection with a token not seen before)", 0, per_call(lambda: uncached(SECRET, user_token), n)))

    body = ask_body("u-1")
    ctx = {"max_questions": 10, "max_timeout": 86400.0}
    out.append(("ask body: JSON parse", 1, per_call(lambda: codec.loads(body), n)))
    raw = codec.loads(body)
    out.append(("ask body: pydantic validation", 1, per_call(lambda: AskBody.model_validate(raw, context=ctx), n)))
    frame = answer_frame("s-1", "f" * 32, "a1")
    out.append(("answer frame: parse + pydantic validation", 1, per_call(lambda: parse_frame(frame), n)))

    reg = Registry()
    counter = iter(range(10**9))

    def ask_and_answer() -> None:
        req, change = reg.prepare_ask(AskInput(f"s-{next(counter)}", "u-1", QUESTIONS))
        assert change is not None
        reg.apply(change)
        reg.drain()
        reg.apply(reg.prepare_answer(req.session_id, req.request_id, ANSWER))
        reg.drain()

    out.append(("core: prepare, apply, drain an ask and its answer (frame encoded once)", 1, per_call(ask_and_answer, n // 4)))
    out.extend(_audit_and_receipt(n))

    out.append(("SQLite: commit the ask, commit the answer (2 transactions)", 1, _commits(n, audit=True)))
    out.append(("... the same without the audit rows (bench only: askd has no such setting)", 0, _commits(n, audit=False)))

    sink = io.StringIO()
    saved = structlog.get_config()
    logs.configure("info", "json", sink)
    log = logs.get_logger("askd.hub")
    structlog.contextvars.bind_contextvars(sessionId="s-1", requestId="f" * 32, userId="u-1")

    def line() -> None:
        log.info("question.asked", questions=1, expiresAt="2026-11-30T20:21:28.861Z", connections=1)
        sink.seek(0)
        sink.truncate()

    out.append(("log line at info (question.asked, question.answered)", 2, per_call(line, n)))
    out.append(("log line below the level (dropped)", 0, per_call(lambda: log.debug("x", a=1), n)))
    structlog.contextvars.clear_contextvars()
    structlog.configure(**saved)
    return out


def _commits(n: int, *, audit: bool) -> float:
    """Microseconds of an ask's commit and its answer's, on a SQLite store in
    a temporary directory; with ``audit`` False, its trail writes nothing."""
    with tempfile.TemporaryDirectory() as d:
        store = SqliteStore(Path(d) / "askd.db")
        if not audit:  # the trail's rows not written: what the audit costs the commit is the difference
            store.audit.write = lambda db, taken, at: store.audit._head  # type: ignore[method-assign]
        sreg = Registry()
        scount = iter(range(10**9))

        def commit_pair() -> float:
            """One ask and its answer through the store; the seconds its two commits took."""
            req, change = sreg.prepare_ask(AskInput(f"s-{next(scount)}", "u-1", QUESTIONS))
            assert change is not None
            t0 = time.perf_counter()
            done(store.commit([change]))
            spent = time.perf_counter() - t0
            sreg.apply(change)
            sreg.drain()
            ended = sreg.prepare_answer(req.session_id, req.request_id, ANSWER)
            t0 = time.perf_counter()
            done(store.commit([ended]))
            spent += time.perf_counter() - t0
            sreg.apply(ended)
            sreg.drain()
            return spent

        # The two commits timed on their own (not the pair less the core's
        # share, a difference that noise on a loaded machine can make negative).
        rounds = max(1, n // 8)
        commit_pair()
        commits = min(sum(commit_pair() for _ in range(rounds)) for _ in range(3)) / rounds * 1e6
        store.close()
    return commits


def _audit_and_receipt(n: int) -> list[tuple[str, int, float]]:
    """What the audit trail and receipts add to a round: the store seals
    two records in its commit (so the SQLite piece holds them), the core
    takes the end's digest (its piece holds it), a ``?wait=`` reply signs
    the receipt (once per ended question)."""
    reg = Registry()
    req, asked = reg.prepare_ask(AskInput("s-audit", "u-1", QUESTIONS))
    assert asked is not None
    reg.apply(asked)
    ended = reg.prepare_answer(req.session_id, req.request_id, ANSWER)
    head = Head()
    taken = [asked, ended]
    pending = Registry()
    held, change = pending.prepare_ask(AskInput("s-digest", "u-1", QUESTIONS))
    assert change is not None
    pending.apply(change)
    reg.apply(ended)
    done_req = reg.get(req.session_id, req.request_id)
    assert done_req is not None
    receipts = Receipts(keyring(SECRET), None)

    def sign() -> None:
        receipts._cache.clear()  # a question is signed once: time the first time
        receipts.receipt(done_req)

    return [
        ("audit: seal the ask's and the answer's records, JCS + SHA-256 (inside the SQLite piece)", 0, per_call(lambda: head.sealed(taken, 1_764_000_000.0), n // 4)),
        ("receipt: the end's digest, JCS + SHA-256 (inside the core's piece)", 0, per_call(lambda: ended_digest(held, ANSWER), n // 4)),
        ("receipt: sign the ended result, EdDSA (once per ended question)", 1, per_call(sign, n // 4)),
    ]


def table(rows: list[tuple[str, int, float]]) -> str:
    lines = ["| piece | per round | us per call | us per round |", "|---|---|---|---|"]
    total = 0.0
    for name, calls, us in rows:
        total += calls * us
        lines.append(f"| {name} | {calls} | {us:.1f} | {calls * us:.1f} |")
    lines.append(f"| **sum of the pieces per round** | | | **{total:.0f}** |")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(prog="python -m bench.breakdown", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=20000, help="calls per timing (default 20,000)")
    args = ap.parse_args()
    print(table(pieces(args.n)))


if __name__ == "__main__":
    main()
