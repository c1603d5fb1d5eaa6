"""``python -m bench [scenario ...] [--size N] [--quick] [--store S]``: run
askd's benchmarks, each against askd and against the floor in the same run,
and print the tables of docs/performance.md.

Scenarios: b1 (reconnect storm), b2 (round trip), b3 (memory), b4 (asks
per second), b5 (start-up with 100,000 questions in the SQLite store
against a memory store holding as many), pieces (one round trip's pieces
timed on their own, in this process: bench/breakdown.py), sweep (B1 and B3 at three sizes
of users, tabs per user and questions per session; with --charts, PNGs into
docs/img/), b6 (several askd nodes on one redis-server: B2, B4 and the Redis
round trips per operation for 1, 2 and 3 nodes, against one askd on SQLite;
needs redis-server), b7 (a daemon exports 100,000 audit records as NDJSON
and CSV; its RSS before, during and after). Default: b1 b2 b3 b4 b5 pieces b7.

askd runs on --store (sqlite, its default, or memory) against the floor;
b2 and b4 also run askd on the other store, in the same run, for the
sqlite/memory comparison. B4 searches each server's highest sustained rate,
then measures CPU per ask at one rate all of them sustain (bench/search.py).
--case approval,quorum2 adds B2 and B4 on approvals (askd only, against
askd's plain question; bench/cases.py); --case unaudited, on askd without
its audit trail and receipts (bench.serve --bare): what they cost.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from pathlib import Path
from collections.abc import Awaitable, Callable
from typing import Any

from bench import breakdown, report
from bench.audit_export import audit_export
from bench.cases import CASES, PLAIN, case_names
from bench.cluster import Cluster
from bench.memory import memory
from bench.proc import STORES, Server, raise_nofile
from bench.rate import rate
from bench.roundtrip import roundtrip
from bench.search import at_rate, common_rate, search
from bench.startup import startup
from bench.storm import storm
from bench.trips import trips

# Scenarios ``both`` runs askd on the other store for, for sqlite against
# memory (B4 does too, in ``b4_bench``).
STORE_COMPARED = ("b2",)

FULL = {
    "b1": {"users": 5000, "tabs": 1, "questions": 1},
    "b2": {"rounds": 2000, "pairs": 200, "pair_rounds": 20},
    "b3": {"questions": 100_000, "per_session": 1, "conns": 10_000, "tabs": 1},
    # A search, not a ladder (bench/search.py): doubling from 250/s, then
    # bisecting to 25/s (a ratio's target of 0.8x needs better than 250/s
    # steps); then CPU per ask at one common rate, three steps of 5 s each.
    "b4": {"start": 250, "resolution": 25, "probe_seconds": 3.0, "max_probes": 16, "measure_seconds": 5.0, "repeats": 3},
    "b5": {"questions": 100_000, "starts": 3},
    # B2's and B4's sizes, and the asks (then answers) whose Redis calls are
    # counted. Steps of 125/s: on two cores the nodes top out between 250 and 500.
    "b6": {"rounds": 2000, "pairs": 200, "pair_rounds": 20, "trips": 1000,
           "rates": [125, 250, 375, 500, 625, 750, 875, 1000, 1250, 1500, 2000], "step_seconds": 3.0},
    "b7": {"records": 100_000},
}
QUICK = {
    "b1": {"users": 40, "tabs": 2, "questions": 2},
    "b2": {"rounds": 30, "pairs": 5, "pair_rounds": 3},
    "b3": {"questions": 400, "per_session": 2, "conns": 100, "tabs": 2},
    "b4": {"start": 50, "resolution": 50, "probe_seconds": 0.3, "max_probes": 4, "measure_seconds": 0.3, "repeats": 1},
    "b5": {"questions": 500, "starts": 1},
    "b6": {"rounds": 30, "pairs": 5, "pair_rounds": 3, "trips": 20, "rates": [50, 100], "step_seconds": 0.3},
    "b7": {"records": 2000},
}
# (users, tabs, questions) for B1; (questions, per_session, conns, tabs) for B3.
SWEEP_B1 = [(1000, 1, 1), (2500, 1, 1), (5000, 1, 1), (1000, 2, 1), (1000, 4, 1), (1000, 1, 3), (1000, 1, 10)]
SWEEP_B3 = [(25_000, 1, 2500, 1), (50_000, 1, 5000, 1), (100_000, 1, 10_000, 1), (50_000, 10, 5000, 4), (50_000, 100, 5000, 16)]
QUICK_DIVISOR = 100

RUNNERS = {"b1": storm, "b2": roundtrip, "b3": memory}
SCENARIOS = (*RUNNERS, "b4", "b5", "pieces", "b6", "b7")
# b6 needs redis-server and adds minutes (two clusters per node count): run by name.
DEFAULT = ("b1", "b2", "b3", "b4", "b5", "pieces", "b7")
NODES = [1, 2, 3]


def sizes(scenario: str, args: argparse.Namespace) -> dict[str, Any]:
    kw = dict((QUICK if args.quick else FULL)[scenario])
    if args.size:
        if scenario == "b1":
            kw["users"] = args.size
        elif scenario == "b7":
            kw["records"] = args.size
        elif scenario in ("b2", "b6"):
            kw["rounds"] = args.size
        elif scenario == "b3":
            kw["questions"], kw["conns"] = args.size, max(1, args.size // 10)
        elif scenario == "b5":
            kw["questions"] = args.size
    if scenario in ("b1", "b3") and args.tabs:
        kw["tabs"] = args.tabs
    if scenario == "b1" and args.questions:
        kw["questions"] = args.questions
    if scenario == "b3" and args.questions:
        kw["per_session"] = args.questions
    return kw


async def both(scenario: str, args: argparse.Namespace, **kw: Any) -> dict[str, Any]:
    """Run one scenario against askd on ``--store``, then (B2) askd on
    the other store, then the floor, each in a fresh process. Keys: ``askd``,
    ``askd_<other store>``, ``floor``."""
    runs = [("askd", "askd", args.store)]
    if scenario in STORE_COMPARED:
        runs += [(f"askd_{other}", "askd", other) for other in STORES if other != args.store]
    runs.append(("floor", "floor", args.store))
    out: dict[str, Any] = {"store": args.store}
    for key, kind, store in runs:
        with Server(kind, store=store, uvloop=args.uvloop, log_level=args.log_level) as server:
            server.profile_dir = args.profile
            out[key] = await RUNNERS[scenario](server, **kw)
        if args.verbose:
            print(f"  {scenario} {key}: {json.dumps(out[key])}", file=sys.stderr, flush=True)
    return out


async def fresh(
    args: argparse.Namespace, kind: str, store: str, label: str, measure: Callable[[Server], Awaitable[dict[str, Any]]], bare: bool = False
) -> dict[str, Any]:
    """``measure`` on a server started for it alone (``bare``: bench.serve --bare)."""
    with Server(kind, store=store, uvloop=args.uvloop, log_level=args.log_level, bare=bare) as server:
        server.profile_dir = args.profile
        out = await measure(server)
    if args.verbose:
        print(f"  {label}: {json.dumps(out)}", file=sys.stderr, flush=True)
    return out


async def b2_cases(args: argparse.Namespace, kw: dict[str, Any]) -> dict[str, Any]:
    """B2 on each ``--case`` but plain, askd on ``--store`` only (the floor
    has no approvals). Keys: the case names, each ``{"askd": ...}``."""
    return {
        name: {"askd": await fresh(args, "askd", args.store, f"b2 {name}", lambda s, c=CASES[name]: roundtrip(s, **kw, case=c), CASES[name].bare)}
        for name in args.cases[1:]
    }


async def b4_bench(args: argparse.Namespace, kw: dict[str, Any]) -> dict[str, Any]:
    """B4: each server's highest sustained rate by search, askd on both
    stores and the floor, each in a fresh process; then CPU per ask at the
    common rate, each afresh (``at_common``). Each ``--case`` but plain:
    askd's search on it, then askd at a rate both it and the plain question
    sustain (``at_rate`` of the case and ``plain_at`` of the plain question)."""
    find = {k: kw[k] for k in ("start", "resolution", "probe_seconds", "max_probes")}
    hold = {"seconds": kw["measure_seconds"], "repeats": kw["repeats"]}
    runs = [("askd", "askd", args.store), *((f"askd_{o}", "askd", o) for o in STORES if o != args.store), ("floor", "floor", args.store)]
    out: dict[str, Any] = {"store": args.store, "sizes": kw}
    for key, kind, store in runs:
        out[key] = await fresh(args, kind, store, f"b4 {key}", lambda s: search(s, **find))
    r = out["common_rate"] = common_rate([out[key]["max_rate"] for key, _, _ in runs], kw["resolution"])
    for key, kind, store in runs:
        out[key]["at_common"] = await fresh(args, kind, store, f"b4 {key} at {r}/s", lambda s: at_rate(s, r, **hold))
    out["cases"] = {}
    for name in args.cases[1:]:
        case = CASES[name]
        got = await fresh(args, "askd", args.store, f"b4 {name}", lambda s: search(s, **find, case=case), case.bare)
        rc = common_rate([out["askd"]["max_rate"], got["max_rate"]], kw["resolution"])
        got["at_rate"] = await fresh(args, "askd", args.store, f"b4 {name} at {rc}/s", lambda s: at_rate(s, rc, **hold, case=case), case.bare)
        plain = out["askd"]["at_common"] if rc == r else await fresh(args, "askd", args.store, f"b4 plain at {rc}/s", lambda s: at_rate(s, rc, **hold, case=PLAIN))
        out["cases"][name] = {"rate": rc, "askd": got, "plain_at": plain}
    return out


def b6_sizes(kw: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """B6's sizes split into B2's and B4's (users and agents: B4's defaults unless given)."""
    return {k: kw[k] for k in ("rounds", "pairs", "pair_rounds")}, {k: kw[k] for k in ("rates", "step_seconds", "users", "agents") if k in kw}


async def on_nodes(n: int, kw: dict[str, Any], **opts: Any) -> dict[str, Any]:
    """B6 on ``n`` nodes: a fresh cluster for B2 and the round trips per
    operation, another for B4; each phase with its per-node and Redis
    figures (``Cluster.phases``)."""
    b2, b4 = b6_sizes(kw)
    out: dict[str, Any] = {"nodes": n}
    with Cluster(n, **opts) as cluster:
        out["b2"] = await roundtrip(cluster, **b2)
        out["b2"]["phases"] = {k: cluster.phases[f"b2-{k}"] for k in ("sequential", "concurrent")}
        out["trips"] = await trips(cluster, kw["trips"])
    with Cluster(n, **opts) as cluster:
        out["b4"] = await rate(cluster, **b4)
        for step in out["b4"]["steps"]:
            step["phase"] = cluster.phases[f"b4-{step['rate']}"]
    return out


async def cluster_bench(args: argparse.Namespace, kw: dict[str, Any]) -> dict[str, Any]:
    """B6: one askd on SQLite (its default store) for the reference, then
    each node count in ``--nodes``. Keys: ``sqlite`` (``b2``, ``b4``) and
    ``runs``, one per node count (``on_nodes``)."""
    b2, b4 = b6_sizes(kw)
    opts = {"log_level": args.log_level, "uvloop": args.uvloop}
    out: dict[str, Any] = {"sizes": kw, "sqlite": {}, "runs": [], "loadavg_at": {}, "others": {}}
    # Other processes share the machine: what they took during each part.
    at: tuple[float, float, float] = (0.0, 0.0, 0.0)

    def begin(part: str) -> None:
        nonlocal at
        out["loadavg_at"][part] = report.loadavg()
        at = (time.perf_counter(), *report.cpu_times())

    def end(part: str, figures: Any) -> None:
        busy, ours = report.cpu_times()
        out["others"][part] = {"wall_s": time.perf_counter() - at[0], "others_cpu_s": max(0.0, (busy - at[1]) - (ours - at[2]))}
        if args.verbose:
            print(f"  b6 {part}: {json.dumps(figures)}", file=sys.stderr, flush=True)

    begin("sqlite")
    with Server("askd", **opts) as server:
        out["sqlite"]["b2"] = await roundtrip(server, **b2)
    with Server("askd", **opts) as server:
        out["sqlite"]["b4"] = await rate(server, **b4)
    end("sqlite", out["sqlite"])
    for n in args.nodes:
        begin(report.nodes_label(n))
        out["runs"].append(await on_nodes(n, kw, **opts))
        end(report.nodes_label(n), out["runs"][-1])
    return out


async def run(args: argparse.Namespace) -> dict[str, Any]:
    results: dict[str, Any] = {"machine": report.machine(), "command": report.command_line(), "loadavg_before": report.loadavg()}
    for scenario in args.scenarios:
        print(f"running {scenario} ...", file=sys.stderr, flush=True)
        results.setdefault("loadavg_at", {})[scenario] = report.loadavg()  # other processes share the machine
        if scenario == "sweep":
            div = QUICK_DIVISOR if args.quick else 1
            results["sweep_b1"] = [
                {"size": [u, t, q], **await both("b1", args, users=max(2, u // div), tabs=t, questions=q)} for u, t, q in SWEEP_B1
            ]
            results["sweep_b3"] = [
                {"size": [n, s, c, t], **await both("b3", args, questions=max(s, n // div), per_session=s, conns=max(t, c // div), tabs=t)}
                for n, s, c, t in SWEEP_B3
            ]
        elif scenario == "pieces":
            results["pieces"] = breakdown.pieces(200 if args.quick else 20_000)
        elif scenario == "b6":
            results[scenario] = await cluster_bench(args, sizes(scenario, args))
        elif scenario == "b4":
            results[scenario] = await b4_bench(args, sizes(scenario, args))
        elif scenario == "b7":
            out = await audit_export(**sizes(scenario, args), uvloop=args.uvloop, log_level=args.log_level)
            results[scenario] = out
            if args.verbose:
                print(f"  b7: {json.dumps(out)}", file=sys.stderr, flush=True)
        elif scenario == "b5":
            kw = sizes(scenario, args)
            out = await startup(**kw, uvloop=args.uvloop, log_level=args.log_level)
            results[scenario] = {"sizes": kw, **out}
            if args.verbose:
                print(f"  b5: {json.dumps(out)}", file=sys.stderr, flush=True)
        else:
            results[scenario] = {"sizes": sizes(scenario, args), **await both(scenario, args, **sizes(scenario, args))}
            if scenario == "b2" and args.cases[1:]:
                results[scenario]["cases"] = await b2_cases(args, sizes(scenario, args))
    results["loadavg_after"] = report.loadavg()
    return results


def node_counts(text: str) -> list[int]:
    counts = [int(x) for x in text.split(",")]
    if not counts or min(counts) < 1:
        raise argparse.ArgumentTypeError("node counts are whole numbers >= 1, e.g. 1,2,3")
    return counts


def cases_arg(text: str) -> list[str]:
    try:
        return case_names(text)
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("scenarios", nargs="*", metavar="scenario", help="b1 b2 b3 b4 b5 pieces b6 b7 sweep (default: b1 b2 b3 b4 b5 pieces b7)")
    ap.add_argument("--size", type=int, help="B1 users, B2 and B6 sequential rounds, B3 questions (connections: a tenth), B5 questions, B7 records")
    ap.add_argument("--nodes", type=node_counts, default=NODES, help="B6: the node counts, comma-separated (default 1,2,3)")
    ap.add_argument("--store", choices=STORES, default=STORES[0], help="askd's store against the floor (default sqlite); B2 and B4 also run the other")
    ap.add_argument(
        "--case", dest="cases", type=cases_arg, default=["plain"],
        help=(
            "B2, B4: what is asked, a comma list of plain, approval, quorum2, unaudited (default plain; the others run askd only,"
            " against its plain question; unaudited: a plain question of askd without its audit trail and receipts, bench.serve --bare)"
        ),
    )
    ap.add_argument("--tabs", type=int, help="B1, B3: connections per user")
    ap.add_argument("--questions", type=int, help="B1, B3: questions per session")
    ap.add_argument("--quick", action="store_true", help="tiny sizes: checks the harness, not the targets")
    ap.add_argument("--uvloop", action="store_true", help="run both servers on uvloop")
    ap.add_argument("--log-level", default="info", help="askd's log level (default info, as deployed)")
    ap.add_argument("--json", type=Path, help="write every figure to this file")
    ap.add_argument("--charts", type=Path, help="with sweep: write PNG charts into this directory")
    ap.add_argument("--profile", type=Path, help="record py-spy profiles (raw stacks) of askd's measured phases here (not B6's)")
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args(argv)
    args.scenarios = args.scenarios or list(DEFAULT)
    unknown = set(args.scenarios) - {*SCENARIOS, "sweep"}
    if unknown:
        ap.error(f"unknown scenario(s): {' '.join(sorted(unknown))}")
    raise_nofile()
    try:
        import uvloop  # the load generator runs on uvloop when it is there: a cheaper client

        runner = uvloop.run
    except ImportError:
        runner = asyncio.run
    started = time.time()
    results = runner(run(args))
    results["date"] = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(started))
    results["uvloop_servers"] = args.uvloop
    results["log_level"] = args.log_level
    results["store"] = args.store
    print(report.markdown(results))
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n")
    if args.charts and ("sweep_b1" in results):
        for path in report.charts(results, args.charts):
            print(f"wrote {path}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
