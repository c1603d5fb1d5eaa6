"""Instructions per ask and answer through the core alone (the registry in
memory: no Tornado, no store, no log), counted by valgrind, which the
machine's load does not change as it changes a timing.

    python -m bench.instructions [--n 2000] [--repeat 3] [case ...]

Cases: ``a`` a one-user ask (the hot path); ``b`` a team ask (a user and a
group of two) with one escalation step; ``c`` the same with
``maxExtensionSeconds``; ``push-a``, ``push-b``, ``push-c``: one re-push of
such a pending question (a tab connects, subscribes to its session, gets
the snapshot and the question, goes away), as in a reconnect storm;
``audit-a``: ``a`` and the audit records its two changes yield, sealed as a
store seals them in its commit (``askd.audit.trail.Head``); ``receipt-a``:
``audit-a`` and the ended result's receipt signed, as a ``?wait=`` reply
signs it (``askd.server.http.receipting``). ``audit-a`` less ``a`` is the
audit trail's share of a round, ``receipt-a`` less ``audit-a`` the
receipt's (its digest is taken in the core, so ``a`` holds that part);
``approval``: an action asked of one user, who approves it; ``quorum2``:
an action asked of two users with quorum 2, both approve (B2's and B4's
cases, through the core). Default: a b c.

A round of a, b, c is what the daemon asks of the core for one question:
``prepare_ask``, ``apply``, ``drain``, then ``prepare_answer`` (by a member
of its audience, over ``ws``), ``apply``, ``drain``; every user named has
one tab, and every frame drained is encoded as the hub encodes it to send.

Each count runs this module under ``valgrind --tool=cachegrind`` twice,
after the same warm-up: once with no measured rounds and once with ``n``.
The difference over ``n`` is one round's instructions: the interpreter's
start, the imports and the warm-up cancel out, and the process leaves with
``os._exit`` (no teardown to count). The garbage collector runs as in
``askd serve`` (``settle_gc`` after the warm-up), its share included.
``PYTHONHASHSEED`` is fixed, so dict layouts repeat between runs. Each
count is repeated (``--repeat``); the table gives the lowest and the
highest, the spread of the method.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
from collections.abc import Callable
from functools import partial
from typing import Any

VALGRIND = "/usr/bin/valgrind"
CASES = ("a", "b", "c", "push-a", "push-b", "push-c", "audit-a", "receipt-a", "approval", "quorum2")
WARMUP = 300


def drain(reg: Any) -> None:
    """Take the registry's outbox and encode every frame in it, as the hub does to send it."""
    for send in reg.drain().sends:
        send.event.frame  # noqa: B018 - encoded, the hub's work


def round_for(case: str, rounds: int) -> Callable[[], None]:
    """One round of a case, ready to run ``rounds`` times."""
    from askd.core import AskInput
    from askd.core.registry import Registry
    from bench.payload import ANSWER, QUESTIONS

    if case in ("approval", "quorum2"):
        return _approvals(2 if case == "quorum2" else 1)
    kind = case.removeprefix("push-").removeprefix("audit-").removeprefix("receipt-")
    reg = Registry()
    users = ("u-1",) if kind == "a" else ("u-1", "u-2", "u-3", "u-4")
    for user in users:
        reg.connect(f"tab-{user}", user)
    if kind != "a":
        reg.apply(reg.prepare_group_set("ops", ["u-2", "u-3"]))
    extra: dict[str, Any] = {}
    if kind != "a":
        # Asked of u-1 and the group; u-4 joins after 5 minutes (not in a round).
        extra = {"to": ("u-1", "group:ops"), "escalate": ((300.0, ("u-4",)),)}
    if kind == "c":
        extra["max_extension"] = 600.0
    answerer = "u-1" if kind == "a" else "u-2"

    def ask(i: int) -> Any:
        return AskInput(f"s-{i}", "u-1", QUESTIONS, **extra)

    send_all = partial(drain, reg)

    counter = iter(range(10**9))

    def ask_and_answer() -> None:
        req, change = reg.prepare_ask(ask(next(counter)))
        reg.apply(change)
        send_all()
        reg.apply(reg.prepare_answer(req.session_id, req.request_id, ANSWER, user_id=answerer, via="ws"))
        send_all()

    if kind == case:
        return ask_and_answer
    if case.startswith(("audit-", "receipt-")):
        return _sealed(reg, ask, send_all, counter, signed=case.startswith("receipt-"))

    # A re-push: the questions wait (one per session); a tab of the answerer
    # comes back, subscribes to one session and leaves.
    pending = []
    for i in range(rounds):
        req, change = reg.prepare_ask(ask(i))
        reg.apply(change)
        pending.append(req.session_id)
    reg.drain()
    sessions = iter(pending)

    def repush() -> None:
        reg.connect("tab-back", answerer)
        reg.subscribe("tab-back", next(sessions))
        send_all()
        reg.disconnect("tab-back")

    return repush


def _approvals(quorum: int) -> Callable[[], None]:
    """An action asked of ``quorum`` users with that quorum, each approving it
    (the last approval ends it); every user has one tab, frames encoded."""
    from askd.core import AskInput
    from askd.core.registry import Registry
    from bench.payload import ACTION

    reg = Registry()
    users = tuple(f"u-{k}" for k in range(1, quorum + 1))
    for user in users:
        reg.connect(f"tab-{user}", user)
    counter = iter(range(10**9))

    send_all = partial(drain, reg)

    def ask_and_approve() -> None:
        to = users if quorum > 1 else None
        req, change = reg.prepare_ask(AskInput(f"s-{next(counter)}", users[0], None, to=to, action=ACTION, quorum=quorum))
        reg.apply(change)
        send_all()
        for user in users:
            reg.apply(reg.prepare_approve(req.session_id, req.request_id, user_id=user, via="ws"))
            send_all()

    return ask_and_approve


def _sealed(reg: Any, ask: Callable[[int], Any], send_all: Callable[[], None], counter: Any, *, signed: bool) -> Callable[[], None]:
    """Case ``a``'s round, its changes' audit records sealed after a head
    kept across rounds, and with ``signed`` its end's receipt signed."""
    from askd.audit.trail import Head
    from askd.receipts import keyring
    from askd.server.http.receipting import Receipts
    from bench.payload import ANSWER

    head = [Head()]
    receipts = Receipts(keyring("bench-receipts-secret-0123456789abcdef"), None)

    def round_() -> None:
        req, change = reg.prepare_ask(ask(next(counter)))
        reg.apply(change)
        send_all()
        ended = reg.prepare_answer(req.session_id, req.request_id, ANSWER, user_id="u-1", via="ws")
        reg.apply(ended)
        send_all()
        _, head[0] = head[0].sealed([change, ended], 1_764_000_000.0)
        if signed:
            receipts.receipt(reg.get(req.session_id, req.request_id))

    return round_


def child(case: str, n: int, size: int) -> None:
    """Set up for ``size`` rounds, run ``WARMUP`` of them, settle the
    collector, run ``n``, leave. Both counts of a difference set up alike."""
    from askd.server.gc_tuning import settle_gc

    one = round_for(case, size)
    for _ in range(WARMUP):
        one()
    settle_gc()
    for _ in range(n):
        one()
    sys.stdout.flush()
    os._exit(0)


def count(case: str, n: int, size: int) -> int:
    """The instructions of one process running ``n`` measured rounds."""
    cmd = [VALGRIND, "--tool=cachegrind", "--cache-sim=no", "--cachegrind-out-file=/dev/null",
           sys.executable, "-m", "bench.instructions", "--child", case, "--n", str(n), "--size", str(size)]
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True)
    m = re.search(r"I\s+refs:\s+([\d,]+)", out.stderr)
    if m is None:
        raise RuntimeError(f"no instruction count in valgrind's output:\n{out.stderr}")
    return int(m.group(1).replace(",", ""))


def per_round(case: str, n: int) -> float:
    size = WARMUP + n
    return (count(case, n, size) - count(case, 0, size)) / n


def calls_per_round(case: str, n: int = 200) -> int:
    """Python function calls in one round (``sys.setprofile``): exact, no valgrind."""
    one = round_for(case, WARMUP + n)
    for _ in range(WARMUP):
        one()
    calls = 0

    def profile(frame: Any, event: str, arg: Any) -> None:
        nonlocal calls
        if event == "call":
            calls += 1

    sys.setprofile(profile)
    for _ in range(n):
        one()
    sys.setprofile(None)
    return round((calls - n) / n)  # less the calls of ``one`` itself


def main() -> None:
    ap = argparse.ArgumentParser(prog="python -m bench.instructions", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("cases", nargs="*", metavar="case", help=f"of {', '.join(CASES)} (default: a b c)")
    ap.add_argument("--n", type=int, default=2000, help="measured rounds per count (default 2,000)")
    ap.add_argument("--repeat", type=int, default=3, help="counts per case (default 3)")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("--size", type=int, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(args.child, args.n, args.size)
        return
    cases = args.cases or ["a", "b", "c"]
    unknown = set(cases) - set(CASES)
    if unknown:
        ap.error(f"unknown case {', '.join(sorted(unknown))}: choose among {', '.join(CASES)}")
    print(f"| case | instructions per round (lowest-highest of {args.repeat}) | median | Python calls per round |")
    print("|---|---|---|---|")
    for case in cases:
        counts = [per_round(case, args.n) for _ in range(args.repeat)]
        print(f"| {case} | {min(counts) / 1000:,.1f}k-{max(counts) / 1000:,.1f}k | "
              f"{statistics.median(counts) / 1000:,.1f}k | {calls_per_round(case)} |", flush=True)


if __name__ == "__main__":
    main()
