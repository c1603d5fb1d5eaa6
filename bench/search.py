"""B4's figures by search rather than a ladder: each server's highest
sustained rate (p99 <= 100 ms, every ask ended), found by doubling from
``start`` until a probe fails, then bisecting until the rate that passed
and the rate that failed are at most ``resolution`` apart; every probe is a
step of ``probe_seconds`` (``bench/rate.py``) and at most ``max_probes`` run.
Then CPU per ask at one rate every compared server sustains (``common_rate``),
each server measured afresh at that rate (``at_rate``): CPU per ask falls as
the rate rises (more work per wake-up), so only the same rate compares."""

from __future__ import annotations

import statistics
from collections.abc import Awaitable, Callable
from typing import Any

from bench.cases import PLAIN, Case
from bench.proc import Server
from bench.rate import P99_LIMIT_MS, Load, passed_mean

# The common rate: this fraction of the lowest maximum of the servers
# compared, so that the slowest is measured below its edge, not on it.
COMMON_FRACTION = 0.8


async def find_max(probe: Callable[[int], Awaitable[bool]], start: int, resolution: int, max_probes: int) -> tuple[int, int | None, int]:
    """(highest rate that passed, 0 if none; lowest that failed, None if
    none did within ``max_probes``; probes run). Doubles from ``start``
    until a probe fails (or, when ``start`` fails, bisects down from it),
    then bisects while the two are more than ``resolution`` apart."""
    lo, hi, n = 0, None, 0
    r = start
    while n < max_probes:
        n += 1
        if await probe(r):
            lo = r
        else:
            hi = r
        if hi is None:
            r = lo * 2
        elif hi - lo <= resolution:
            break
        else:
            r = (lo + hi) // 2
            if r <= 0:  # a rate under 1/s: nothing passes
                break
    return lo, hi, n


async def search(
    server: Server,
    start: int,
    resolution: int,
    probe_seconds: float,
    max_probes: int,
    users: int = 100,
    agents: int = 64,
    p99_limit_ms: float = P99_LIMIT_MS,
    case: Case = PLAIN,
) -> dict[str, Any]:
    """One server's highest sustained rate: ``max_rate`` (0: nothing
    passed), ``ceiling`` (the lowest rate that failed; None: none failed, so
    ``max_rate`` is a lower bound), ``probes``, and the probes as ``steps``
    in the order run (``cpu_per_ask_us``: over the probes that passed)."""
    steps: list[dict[str, Any]] = []
    async with Load(server, users, agents, p99_limit_ms, case) as load:
        await load.warm_up(start, probe_seconds)

        async def probe(r: int) -> bool:
            steps.append(await load.step(r, probe_seconds, f"b4-{case.name}-{r}"))
            return bool(steps[-1]["passed"])

        lo, hi, n = await find_max(probe, start, resolution, max_probes)
    return {"max_rate": lo, "ceiling": hi, "probes": n, "resolution": resolution, "cpu_per_ask_us": passed_mean(steps), "steps": steps}


def common_rate(max_rates: list[int], resolution: int, fraction: float = COMMON_FRACTION) -> int:
    """The rate the servers are compared at: ``fraction`` of the lowest
    maximum, rounded down to ``resolution``; at least ``resolution`` (a
    server that sustained nothing is then measured where it fails)."""
    low = min(max_rates, default=0)
    return max(resolution, int(low * fraction) // resolution * resolution)


async def at_rate(
    server: Server,
    r: int,
    seconds: float,
    repeats: int,
    users: int = 100,
    agents: int = 64,
    p99_limit_ms: float = P99_LIMIT_MS,
    case: Case = PLAIN,
) -> dict[str, Any]:
    """CPU per ask at ``r`` asks/s: ``repeats`` steps of ``seconds`` after a
    warm-up; the median step's CPU per ask, and whether every step passed."""
    async with Load(server, users, agents, p99_limit_ms, case) as load:
        await load.warm_up(r, seconds)
        steps = [await load.step(r, seconds, f"b4-{case.name}-at-{r}") for _ in range(max(1, repeats))]
    return {
        "rate": r,
        "cpu_per_ask_us": statistics.median(s["cpu_per_ask_us"] for s in steps),
        "p99_ms": max(s["p99_ms"] for s in steps),
        "passed": all(s["passed"] for s in steps),
        "steps": steps,
    }
