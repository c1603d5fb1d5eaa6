"""Turn a run's results into the tables of docs/performance.md (askd against
the floor; askd's SQLite store against its memory store; several nodes on
one Redis against one askd on SQLite) and, for a sweep, PNG charts."""

from __future__ import annotations

import math
import os
import platform
import shlex
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

KIB = 1024
MB = 1_000_000


def machine() -> dict[str, Any]:
    model = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {"nproc": os.cpu_count(), "cpu": model, "python": platform.python_version(), "kernel": platform.release()}


def loadavg() -> str:
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "?"


def cpu_times() -> tuple[float, float]:
    """(CPU seconds the whole machine has been busy, CPU seconds of this
    process and of the children it reaped: the servers it stopped). Their
    difference over a stretch is what other processes took meanwhile (the
    load average cannot tell those from the benchmark's own)."""
    ticks = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:9]]
    user, nice, system, _idle, _iowait, irq, softirq, steal = ticks
    t = os.times()
    return (user + nice + system + irq + softirq + steal) / os.sysconf("SC_CLK_TCK"), t.user + t.system + t.children_user + t.children_system


def command_line() -> str:
    return "python -m bench " + shlex.join(sys.argv[1:])


@dataclass
class Row:
    scenario: str
    figure: str
    askd: float
    floor: float | None
    target: str = ""
    met: Callable[[float, float], bool] | None = None  # (askd, ratio) -> met?
    digits: int = 2

    @property
    def ratio(self) -> float:
        if self.floor is None or self.floor == 0:
            return math.nan
        return self.askd / self.floor

    def cells(self) -> list[str]:
        fmt = f"{{:,.{self.digits}f}}"
        met = "" if self.met is None else ("yes" if self.met(self.askd, self.ratio) else "**no**")
        floor = "" if self.floor is None else fmt.format(self.floor)
        ratio = "" if math.isnan(self.ratio) else f"{self.ratio:.2f}x"
        return [self.scenario, self.figure, fmt.format(self.askd), floor, ratio, self.target, met]


def rows(results: dict[str, Any]) -> list[Row]:
    out: list[Row] = []
    within = lambda k: (lambda a, r: r <= k)  # noqa: E731
    if "b1" in results:
        a, f, n = results["b1"]["askd"], results["b1"]["floor"], results["b1"]["sizes"]["users"]
        out += [
            Row("B1", f"storm, {n:,} users: wall until all hold their question (s)", a["wall_s"], f["wall_s"], "< 5 s", lambda a_, r: a_ < 5),
            Row("B1", "storm: server CPU (s)", a["cpu_s"], f["cpu_s"], "<= 1.3x", within(1.3)),
            Row("B1", "storm: per-user p50 (s)", a["p50_s"], f["p50_s"]),
            Row("B1", "storm: per-user p99 (s)", a["p99_s"], f["p99_s"]),
        ]
    if "b2" in results:
        a, f, s = results["b2"]["askd"], results["b2"]["floor"], results["b2"]["sizes"]
        out += [
            Row("B2", f"round trip p50, {s['rounds']:,} sequential (ms)", a["p50_ms"], f["p50_ms"], "<= 1.3x", within(1.3), 3),
            Row("B2", "round trip p99 (ms)", a["p99_ms"], f["p99_ms"], digits=3),
            Row("B2", "server CPU per round (us)", a["cpu_per_round_us"], f["cpu_per_round_us"], "<= 1.3x", within(1.3), 0),
            Row("B2", f"throughput, {s['pairs']} concurrent pairs (rounds/s)", a["throughput_rps"], f["throughput_rps"], digits=0),
            Row("B2", f"round trip p99 with {s['pairs']} pairs (ms)", a["conc_p99_ms"], f["conc_p99_ms"], digits=1),
        ]
    if "b3" in results:
        a, f, s = results["b3"]["askd"], results["b3"]["floor"], results["b3"]["sizes"]
        out += [
            Row("B3", f"RSS per pending question, {s['questions']:,} (B)", a["per_question_b"], f["per_question_b"], digits=0),
            Row("B3", "... beyond its 597-byte payload (B)", a["beyond_payload_b"], f["beyond_payload_b"], "<= 1,024 B", lambda a_, r: a_ <= KIB, 0),
            Row("B3", f"RSS per idle authenticated connection, {s['conns']:,} (B)", a["per_conn_b"], f["per_conn_b"], "<= 16,384 B", lambda a_, r: a_ <= 16 * KIB, 0),
        ]
    if "b4" in results:
        a, f = results["b4"]["askd"], results["b4"]["floor"]
        out += [
            Row("B4", "asks/s sustained with p99 <= 100 ms", a["max_rate"], f["max_rate"], ">= 0.8x", lambda a_, r: r >= 0.8, 0),
            Row("B4", "server CPU per ask (us)", a["cpu_per_ask_us"], f["cpu_per_ask_us"], digits=0),
        ]
        if "common_rate" in results["b4"]:  # the search's run: both at one rate
            r = results["b4"]["common_rate"]
            out.append(Row("B4", f"server CPU per ask at {r:,}/s, both servers (us)", a["at_common"]["cpu_per_ask_us"], f["at_common"]["cpu_per_ask_us"], digits=0))
    return out


def case_rows(results: dict[str, Any]) -> list[Row]:
    """The cases other than a plain question (``--case``): askd's figure on
    the case, against askd's own on the plain question (``floor`` holds
    that; the floor itself has no approvals)."""
    out: list[Row] = []
    b2 = results.get("b2", {})
    for name, c in b2.get("cases", {}).items():
        a, p, s = c["askd"], b2["askd"], b2["sizes"]
        out += [
            Row(f"B2 {name}", f"round trip p50, {s['rounds']:,} sequential (ms)", a["p50_ms"], p["p50_ms"], digits=3),
            Row(f"B2 {name}", "round trip p99 (ms)", a["p99_ms"], p["p99_ms"], digits=3),
            Row(f"B2 {name}", "server CPU per round (us)", a["cpu_per_round_us"], p["cpu_per_round_us"], digits=0),
            Row(f"B2 {name}", f"throughput, {s['pairs']} concurrent pairs (rounds/s)", a["throughput_rps"], p["throughput_rps"], digits=0),
        ]
    b4 = results.get("b4", {})
    for name, c in b4.get("cases", {}).items():
        a = c["askd"]
        out += [
            Row(f"B4 {name}", "asks/s sustained with p99 <= 100 ms", a["max_rate"], b4["askd"]["max_rate"], digits=0),
            Row(f"B4 {name}", f"server CPU per ask at {c['rate']:,}/s (us)", a["at_rate"]["cpu_per_ask_us"], c["plain_at"]["cpu_per_ask_us"], digits=0),
        ]
    return out


def b4_search_table(b4: dict[str, Any]) -> tuple[list[str], list[list[str]]]:
    """Each server's search (the highest rate that passed, the lowest that
    failed, the probes run) and its figures at the rate it was compared at."""
    header = ["server", "asks/s sustained", "lowest failed", "probes", "compared at (asks/s)", "CPU us/ask there", "p99 ms there", "passed there"]
    servers = [(f"askd ({store})", r, r.get("at_common")) for store, r in by_store(b4).items()] + [("floor", b4["floor"], b4["floor"].get("at_common"))]
    servers += [(f"askd ({b4.get('store', 'sqlite')}), {name}", c["askd"], c["askd"].get("at_rate")) for name, c in b4.get("cases", {}).items()]
    servers += [(f"askd ({b4.get('store', 'sqlite')}), plain", c["plain_at"], c["plain_at"]) for c in b4.get("cases", {}).values() if c["plain_at"] is not b4["askd"].get("at_common")]
    body = []
    for label, r, at in servers:
        ceiling = r.get("ceiling")
        body.append([
            label, f"{r['max_rate']:,}" if "max_rate" in r else "",
            "" if "max_rate" not in r else (f"{ceiling:,}" if ceiling is not None else f"none in {r['probes']} probes"),
            str(r.get("probes", "")), f"{at['rate']:,}" if at else "", f"{at['cpu_per_ask_us']:,.0f}" if at else "",
            f"{at['p99_ms']:.1f}" if at else "", ("yes" if at["passed"] else "no") if at else "",
        ])
    return header, body


def by_store(scenario: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """A B2 or B4 result's askd figures by store: ``askd`` ran on the run's
    ``--store``, ``askd_<other>`` on the other."""
    out = {scenario.get("store", "sqlite"): scenario["askd"]}
    out.update({k[len("askd_") :]: v for k, v in scenario.items() if k.startswith("askd_")})
    return out


def store_rows(results: dict[str, Any]) -> list[Row]:
    """SQLite (askd's default store) against the memory store: B2 and B4
    when both ran, and B5. ``askd`` is the SQLite figure, ``floor`` the
    memory store's."""
    out: list[Row] = []
    within = lambda k: (lambda a, r: r <= k)  # noqa: E731
    b2 = by_store(results["b2"]) if "b2" in results else {}
    if {"sqlite", "memory"} <= b2.keys():
        a, m, s = b2["sqlite"], b2["memory"], results["b2"]["sizes"]
        out += [
            Row("B2", f"round trip p50, {s['rounds']:,} sequential (ms)", a["p50_ms"], m["p50_ms"], "<= 1.2x", within(1.2), 3),
            Row("B2", "round trip p99 (ms)", a["p99_ms"], m["p99_ms"], digits=3),
            Row("B2", "server CPU per round (us)", a["cpu_per_round_us"], m["cpu_per_round_us"], digits=0),
            Row("B2", f"throughput, {s['pairs']} concurrent pairs (rounds/s)", a["throughput_rps"], m["throughput_rps"], digits=0),
        ]
    b4 = by_store(results["b4"]) if "b4" in results else {}
    if {"sqlite", "memory"} <= b4.keys():
        a, m = b4["sqlite"], b4["memory"]
        out += [
            Row("B4", "asks/s sustained with p99 <= 100 ms", a["max_rate"], m["max_rate"], ">= 0.8x", lambda a_, r: r >= 0.8, 0),
            Row("B4", "server CPU per ask, passed steps (us)", a["cpu_per_ask_us"], m["cpu_per_ask_us"], digits=0),
        ]
        # CPU per ask falls as the rate rises (more work per wake-up): compare
        # the stores at the same rate. A search's run measured every server
        # at one rate; a ladder's: the highest rate both passed.
        if "common_rate" in results["b4"]:
            common, cpu = results["b4"]["common_rate"], [a["at_common"]["cpu_per_ask_us"], m["at_common"]["cpu_per_ask_us"]]
        else:
            passed = [{step["rate"]: step for step in r["steps"] if step["passed"]} for r in (a, m)]
            common = max(passed[0].keys() & passed[1].keys(), default=None)
            cpu = [p[common]["cpu_per_ask_us"] for p in passed] if common is not None else []
        if common is not None:
            out.append(Row("B4", f"server CPU per ask at {common:,}/s (us)", cpu[0], cpu[1], digits=0))
    if "b5" in results:
        b5 = results["b5"]
        a, m, n = b5["sqlite"], b5["memory"], b5["questions"]
        out += [
            Row("B5", f"start to serving, {n:,} questions in the store (s, median)", a["served_s"], None, "<= 3 s", lambda a_, r: a_ <= 3, 2),
            Row("B5", "start to /healthz 200 (s, median)", a["healthz_s"], None, digits=2),
        ]
        if a.get("served_cold_s") is not None:
            out.append(Row("B5", "start to serving, store file not in the page cache (s)", a["served_cold_s"], None, digits=2))
        out += [
            Row("B5", "start to serving, empty store (s)", a["empty_served_s"], m["empty_served_s"], digits=2),
            Row("B5", f"RSS holding {n:,} questions (MB): sqlite restored / memory asked", a["rss_b"] / MB, m["rss_b"] / MB, "<= 1.0x", within(1.0), 1),
            Row("B5", "... per question beyond the empty daemon (B)", (a["rss_b"] - a["rss_empty_b"]) / n, (m["rss_b"] - m["rss_empty_b"]) / n, digits=0),
            Row("B5", "RSS of the empty daemon (MB)", a["rss_empty_b"] / MB, m["rss_empty_b"] / MB, digits=1),
            Row("B5", f"RSS holding {n:,} questions, both asked over HTTP (MB)", a["rss_asked_b"] / MB, m["rss_asked_b"] / MB, digits=1),
        ]
    return out


# ---- B6: several nodes on one Redis --------------------------------------

CROSS_NODE_TARGET = 2.0  # cross-node round trip p50 at most 2x one askd on SQLite
HOT_PATH_TARGET = 2  # Redis round trips on the hot path of an ask, of an answer


def nodes_label(n: int) -> str:
    return f"{n} node{'s' if n > 1 else ''}"


def _us(seconds: float, ops: int) -> float:
    return seconds / max(1, ops) * 1e6


def _per_node(seconds: list[float], ops: int) -> str:
    return " / ".join(f"{_us(s, ops):,.0f}" for s in seconds)


def _per_op(x: float) -> str:
    return f"{x:.2f}" if x >= 0.1 or x == 0 else f"{x:.3f}"


def b6_rate(b6: dict[str, Any]) -> int:
    """The rate B6 compares CPU per ask at: the highest every server passed
    (CPU per ask falls as the rate rises), else the ladder's first."""
    runs = [b6["sqlite"]["b4"], *(r["b4"] for r in b6["runs"])]
    passed = [{s["rate"] for s in r["steps"] if s["passed"]} for r in runs]
    return max(set.intersection(*passed), default=b6["sizes"]["rates"][0])


def b6_table(b6: dict[str, Any]) -> tuple[list[str], list[list[str]]]:
    """One row per server: one askd on SQLite (the reference), then each
    node count on Redis. CPU per node in node order (n1 / n2 / ...)."""
    s, ref = b6["sizes"], b6["sqlite"]
    at = b6_rate(b6)
    rounds = s["rounds"]
    header = [
        "askd", f"round trip p50, {rounds:,} sequential (ms)", "p99 (ms)", "p50 / SQLite p50", "target", "met",
        "CPU us/round", "per node", "Redis CPU us/round", f"rounds/s, {s['pairs']} pairs", f"p99 with {s['pairs']} pairs (ms)",
        "asks/s with p99 <= 100 ms", f"CPU us/ask at {at:,}/s", "per node", "Redis CPU us/ask",
    ]

    def step(b4: dict[str, Any]) -> dict[str, Any] | None:
        return next((x for x in b4["steps"] if x["rate"] == at), None)

    r2, r4 = ref["b2"], step(ref["b4"])
    body = [[
        "1 node, SQLite", f"{r2['p50_ms']:.3f}", f"{r2['p99_ms']:.3f}", "1.00x", "", "", f"{r2['cpu_per_round_us']:,.0f}", "", "",
        f"{r2['throughput_rps']:,.0f}", f"{r2['conc_p99_ms']:.1f}", f"{ref['b4']['max_rate']:,}",
        f"{r4['cpu_per_ask_us']:,.0f}" if r4 else "", "", "",
    ]]
    for run in b6["runs"]:
        n, b2 = run["nodes"], run["b2"]
        seq = b2["phases"]["sequential"]
        ratio = b2["p50_ms"] / r2["p50_ms"]
        cross = n >= 2  # every question crosses nodes: the target applies
        x = step(run["b4"])
        asks = x["asks"] if x else 0
        body.append([
            f"{nodes_label(n)}, Redis", f"{b2['p50_ms']:.3f}", f"{b2['p99_ms']:.3f}", f"{ratio:.2f}x",
            f"<= {CROSS_NODE_TARGET:g}x" if cross else "", ("yes" if ratio <= CROSS_NODE_TARGET else "**no**") if cross else "",
            f"{b2['cpu_per_round_us']:,.0f}", _per_node(seq["node_cpu_s"], rounds), f"{_us(seq['redis_cpu_s'], rounds):,.0f}",
            f"{b2['throughput_rps']:,.0f}", f"{b2['conc_p99_ms']:.1f}", f"{run['b4']['max_rate']:,}",
            f"{x['cpu_per_ask_us']:,.0f}" if x else "", _per_node(x["phase"]["node_cpu_s"], asks) if x else "",
            f"{_us(x['phase']['redis_cpu_s'], asks):,.0f}" if x else "",
        ])
    return header, body


def b6_trips_table(b6: dict[str, Any]) -> tuple[list[str], list[list[str]]]:
    """Redis round trips per operation: what the node handling it waits for
    (its commit's EVALSHA and its follower's XREAD), what every node sent,
    and every command Redis ran (a script's own commands included)."""
    header = [
        "nodes", "operation", "handled by", "round trips on the hot path", "target", "met",
        "EVALSHA (commit) per op", "XREAD per op, each node", "other commands sent per op", "commands Redis ran per op (in scripts)",
        "CPU us/op, each node (MONITOR on)",
    ]
    body = []
    for run in b6["runs"]:
        t = run["trips"]
        for op in ("ask", "answer"):
            f = t[op]
            nodes = [k for k in f["sent"] if k != "lua"]
            commits = sum(f["sent"][k].get("evalsha commit", 0.0) for k in nodes)
            xread = " / ".join(f"{k} {_per_op(f['sent'][k].get('xread', 0.0))}" for k in sorted(nodes))
            other = ", ".join(
                f"{k} {cmd} {_per_op(v)}" for k in sorted(nodes) for cmd, v in f["sent"][k].items() if cmd not in ("evalsha commit", "xread")
            )
            in_scripts = sum(f["sent"].get("lua", {}).values())
            body.append([
                str(run["nodes"]), f"{op} (x{t['count']:,})", f["handler"], _per_op(f["hot_path"]), f"<= {HOT_PATH_TARGET}",
                "yes" if f["hot_path"] <= HOT_PATH_TARGET else "**no**", _per_op(commits), xread, other or "none",
                f"{_per_op(sum(f['calls'].values()))} ({_per_op(in_scripts)})",
                " / ".join(f"{cpu:,.0f}" for cpu in f["node_cpu_us"]),
            ])
    return header, body


def b6_steps_table(b6: dict[str, Any]) -> tuple[list[str], list[list[str]]]:
    # XREAD per ask falls with the rate: a follower reads every entry that came meanwhile in one call.
    header = ["askd", "asks/s offered", "completed", "p50 ms", "p99 ms", "CPU us/ask", "per node", "Redis CPU us/ask", "EVALSHA/ask", "XREAD/ask, per node", "passed"]
    servers = [("1 node, SQLite", b6["sqlite"]["b4"])] + [(f"{nodes_label(r['nodes'])}, Redis", r["b4"]) for r in b6["runs"]]
    body = []
    for label, b4 in servers:
        for x in b4["steps"]:
            phase, asks = x.get("phase"), max(1, x["asks"])
            calls = phase["calls"] if phase else {}
            body.append([
                label, f"{x['rate']:,}", f"{x['completed']}/{x['asks']}", f"{x['p50_ms']:.1f}", f"{x['p99_ms']:.1f}", f"{x['cpu_per_ask_us']:,.0f}",
                _per_node(phase["node_cpu_s"], x["asks"]) if phase else "", f"{_us(phase['redis_cpu_s'], x['asks']):,.0f}" if phase else "",
                f"{calls.get('evalsha', 0) / asks:.2f}" if phase else "",
                f"{calls.get('xread', 0) / asks / len(phase['node_cpu_s']):.2f}" if phase else "",
                "yes" if x["passed"] else "no",
            ])
    return header, body


def _table(header: list[str], body: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(r) + " |" for r in body]
    return "\n".join(lines)


def markdown(results: dict[str, Any]) -> str:
    m = results["machine"]
    parts = [
        f"Machine: {m['nproc']} CPUs, {m['cpu']}, Python {m['python']}, Linux {m['kernel']}; "
        f"date {results.get('date', '?')}; load average {results['loadavg_before']} before, {results['loadavg_after']} after; "
        f"askd log level {results.get('log_level')}; askd store (against the floor) {results.get('store', 'sqlite')}; "
        f"servers on uvloop: {results.get('uvloop_servers')}.",
        f"Command: `{results['command']}`",
    ]
    if results.get("loadavg_at"):
        parts.append("Load average as each scenario began: " + "; ".join(f"{k} {v}" for k, v in results["loadavg_at"].items()) + ".")
    table = rows(results)
    if table:
        parts.append(_table(["", "figure", "askd", "floor", "askd/floor", "target", "met"], [r.cells() for r in table]))
    stores = store_rows(results)
    if stores:
        parts.append("The stores:\n\n" + _table(["", "figure", "sqlite", "memory", "sqlite/memory", "target", "met"], [r.cells() for r in stores]))
    cases = case_rows(results)
    if cases:
        parts.append(
            f"The cases (askd on {results.get('store', 'sqlite')}; the floor has no approvals, so each case is set against askd's plain question):\n\n"
            + _table(["", "figure", "askd, the case", "askd, plain", "case/plain", "target", "met"], [r.cells() for r in cases])
        )
    if "sweep_b1" in results:
        body = []
        for e in results["sweep_b1"]:
            a, f = e["askd"], e["floor"]
            body.append(
                [f"{a['users']:,}", str(a["tabs"]), str(a["questions"]), f"{a['wall_s']:.2f}", f"{f['wall_s']:.2f}", f"{a['cpu_s']:.2f}", f"{f['cpu_s']:.2f}", f"{a['cpu_s'] / f['cpu_s']:.2f}x" if f["cpu_s"] else ""]
            )
        parts.append("B1 sweep:\n\n" + _table(["users", "tabs/user", "questions/session", "askd wall s", "floor wall s", "askd CPU s", "floor CPU s", "CPU ratio"], body))
    if "sweep_b3" in results:
        body = []
        for e in results["sweep_b3"]:
            a, f = e["askd"], e["floor"]
            body.append(
                [f"{a['questions']:,}", str(a["per_session"]), f"{a['per_question_b']:.0f}", f"{f['per_question_b']:.0f}", f"{a['conns']:,}", str(a["tabs"]), f"{a['per_conn_b']:.0f}", f"{f['per_conn_b']:.0f}"]
            )
        parts.append("B3 sweep:\n\n" + _table(["questions", "questions/session", "askd B/question", "floor B/question", "connections", "tabs/user", "askd B/conn", "floor B/conn"], body))
    if "b4" in results:
        body = []
        servers = [(f"askd ({store})", r) for store, r in by_store(results["b4"]).items()] + [("floor", results["b4"]["floor"])]
        servers += [(f"askd ({results['b4'].get('store', 'sqlite')}), {name}", c["askd"]) for name, c in results["b4"].get("cases", {}).items()]
        for label, r in servers:
            for s in r["steps"]:
                body.append([label, str(s["rate"]), f"{s['completed']}/{s['asks']}", f"{s['p50_ms']:.1f}", f"{s['p99_ms']:.1f}", f"{s['cpu_per_ask_us']:.0f}", "yes" if s["passed"] else "no"])
        parts.append(("B4 steps (a search's probes, in the order run):" if "common_rate" in results["b4"] else "B4 steps:") + "\n\n" + _table(["server", "asks/s offered", "completed", "p50 ms", "p99 ms", "CPU us/ask", "passed"], body))
        if "common_rate" in results["b4"]:
            parts.append(f"B4 search (resolution {results['b4']['sizes']['resolution']}/s) and CPU per ask at a common rate:\n\n" + _table(*b4_search_table(results["b4"])))
    if "pieces" in results:
        from bench.breakdown import table

        parts.append("One round trip's pieces, each timed alone in one process (`bench/breakdown.py`):\n\n" + table([tuple(r) for r in results["pieces"]]))
    if "b6" in results:
        b6 = results["b6"]
        others = "; ".join(
            f"{k} {v['others_cpu_s']:.1f} s in {v['wall_s']:.0f} s ({v['others_cpu_s'] / v['wall_s'] / (os.cpu_count() or 1):.0%} of the CPUs)"
            for k, v in b6.get("others", {}).items()
        )
        parts.append(
            "B6, several nodes on one Redis (load average as each part began: "
            + "; ".join(f"{k} {v}" for k, v in b6["loadavg_at"].items())
            + (f"; CPU other processes took during each part: {others}" if others else "")
            + "):\n\n" + _table(*b6_table(b6))
        )
        parts.append("B6 Redis round trips per operation:\n\n" + _table(*b6_trips_table(b6)))
        parts.append("B6 steps (B4 on each server):\n\n" + _table(*b6_steps_table(b6)))
    if "b5" in results:
        a, m = results["b5"]["sqlite"], results["b5"]["memory"]
        body = [
            [str(k + 1), "cold" if r["cold"] else "warm", f"{r['listening_s']:.2f}", f"{r['healthz_s']:.2f}", f"{r['served_s']:.2f}", f"{r['rss_b'] / MB:.1f}"]
            for k, r in enumerate(a["runs"])
        ]
        parts.append(
            f"B5 starts on the SQLite store ({results['b5']['questions']:,} questions, filled in {a['fill_s']:.1f} s, "
            f"file {a['db_bytes'] / MB:.1f} MB; asked over HTTP in {a['ask_s']:.1f} s on the SQLite store, "
            f"{m['ask_s']:.1f} s on the memory store):\n\n"
            + _table(["start", "page cache", "to askd.json s", "to /healthz s", "to serving s", "RSS MB"], body)
        )
    if "b7" in results:
        from bench.audit_export import table as b7_table

        b7 = results["b7"]
        parts.append(
            f"B7 audit export through `GET /admin/v1/audit` ({b7['records']:,} records on the SQLite store, filled in "
            f"{b7['fill_s']:.1f} s, file {b7['db_bytes'] / MB:.1f} MB; RSS {b7['rss_start_b'] / MB:.1f} MB after the start):\n\n"
            + _table(*b7_table(b7))
        )
    return "\n\n".join(parts) + "\n"


def charts(results: dict[str, Any], out_dir: Path) -> list[Path]:
    """B1 and B3 cost against users, tabs per user and questions per session."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    b1 = results["sweep_b1"]
    fig, axes = plt.subplots(1, 3, figsize=(13, 4))
    for ax, key, label, base in (
        (axes[0], "users", "users (1 tab, 1 question)", lambda a: a["tabs"] == 1 and a["questions"] == 1),
        (axes[1], "tabs", "tabs per user (1,000 users)", lambda a: a["users"] == min(e["askd"]["users"] for e in b1) and a["questions"] == 1),
        (axes[2], "questions", "questions per session (1,000 users)", lambda a: a["users"] == min(e["askd"]["users"] for e in b1) and a["tabs"] == 1),
    ):
        pts = sorted((e["askd"][key], e["askd"]["cpu_s"], e["floor"]["cpu_s"], e["askd"]["wall_s"], e["floor"]["wall_s"]) for e in b1 if base(e["askd"]))
        xs = [p[0] for p in pts]
        ax.plot(xs, [p[1] for p in pts], "o-", label="askd CPU s")
        ax.plot(xs, [p[2] for p in pts], "o--", label="floor CPU s")
        ax.plot(xs, [p[3] for p in pts], "s-", label="askd wall s")
        ax.plot(xs, [p[4] for p in pts], "s--", label="floor wall s")
        ax.set_xlabel(label)
        ax.set_ylabel("seconds for the whole storm")
        ax.grid(alpha=0.3)
    axes[0].legend(fontsize=8)
    fig.suptitle("B1 reconnect storm: cost of re-pushing every pending question")
    fig.tight_layout()
    path = out_dir / "bench-b1-storm.png"
    fig.savefig(path, dpi=100)
    plt.close(fig)
    written.append(path)

    b3 = results["sweep_b3"]
    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    # (x, group, figure) pairs: one askd and one floor line per group.
    for ax, x, group, group_label, figure, xlabel, ylabel in (
        (axes[0], "questions", "per_session", "{}/session", "per_question_b", "pending questions", "RSS bytes per question"),
        (axes[1], "conns", "tabs", "{} tabs/user", "per_conn_b", "idle connections", "RSS bytes per connection"),
    ):
        pts = sorted((e["askd"][x], e["askd"][group], e["askd"][figure], e["floor"][figure]) for e in b3)
        for g in sorted({p[1] for p in pts}):
            sel = [p for p in pts if p[1] == g]
            ax.plot([p[0] for p in sel], [p[2] for p in sel], "o-", label="askd, " + group_label.format(g))
            ax.plot([p[0] for p in sel], [p[3] for p in sel], "x--", label="floor, " + group_label.format(g))
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        ax.legend(fontsize=8)
        ax.grid(alpha=0.3)
    fig.suptitle("B3 memory per pending question and per idle connection")
    fig.tight_layout()
    path = out_dir / "bench-b3-memory.png"
    fig.savefig(path, dpi=100)
    plt.close(fig)
    written.append(path)
    return written
