"""Smoke runs of every benchmark at a tiny size, so the harness cannot rot
silently. They check that it runs end to end against askd (on each store)
and the floor (real processes, real sockets) and that its figures are sane;
they do not check the performance targets (docs/performance.md does)."""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from typing import Any

import pytest

from askd.server.app import LISTEN_BACKLOG
from bench import floor, report
from bench import __main__ as cli
from bench.__main__ import b6_sizes, main, on_nodes
from bench.audit_export import audit_export
from bench.cases import CASES
from bench.memory import memory
from bench.proc import Server
from bench.rate import rate
from bench.common import admin
from bench.roundtrip import WARMUP_ROUNDS, roundtrip
from bench.search import at_rate, common_rate, find_max, search
from bench.startup import startup
from bench.storm import storm

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def servers() -> Iterator[dict[str, Server]]:
    """Keyed as ``python -m bench`` keys its results: askd on its default
    store, askd on the memory store (B2, B4), the floor."""
    with Server("askd") as askd, Server("askd", store="memory") as askd_memory, Server("floor") as fl:
        yield {"askd": askd, "askd_memory": askd_memory, "floor": fl}


def against_floor(servers: dict[str, Server]) -> dict[str, Server]:
    return {k: servers[k] for k in ("askd", "floor")}


def finite(x: float) -> bool:
    return isinstance(x, (int, float)) and math.isfinite(x)


def check_rows(results: dict[str, Any]) -> list[report.Row]:
    rows = report.rows(results)
    assert rows
    for row in rows:  # signs are checked per scenario ("beyond payload" may be < 0)
        assert finite(row.askd), row
        assert row.floor is not None and finite(row.floor), row
    assert "| B" in report.markdown({**results, "machine": report.machine(), "command": "x", "loadavg_before": "0", "loadavg_after": "0"})
    return rows


def check_store_rows(results: dict[str, Any]) -> list[report.Row]:
    """The SQLite/memory table: every figure finite, every ratio too."""
    rows = report.store_rows(results)
    assert rows
    for row in rows:
        assert finite(row.askd), row
        assert row.floor is None or (finite(row.floor) and finite(row.ratio)), row
    assert "The stores:" in report.markdown({**results, "machine": report.machine(), "command": "x", "loadavg_before": "0", "loadavg_after": "0"})
    return rows


def test_askd_runs_on_the_store_it_is_given(servers: dict[str, Server]) -> None:
    for key, store in (("askd", "sqlite"), ("askd_memory", "memory")):
        assert json.loads((servers[key].state_dir / "askd.json").read_text())["store"] == store


async def test_b1_storm_every_user_gets_its_questions_back(servers: dict[str, Server]) -> None:
    sizes = {"users": 15, "tabs": 2, "questions": 2}
    out: dict[str, Any] = {"sizes": sizes}
    for kind, server in against_floor(servers).items():
        out[kind] = r = await storm(server, **sizes)  # raises if a tab misses a question
        assert 0 < r["p50_s"] <= r["p99_s"] <= r["wall_s"]
        assert r["cpu_s"] >= 0
    rows = check_rows({"b1": out})
    assert finite(rows[0].ratio) and rows[0].ratio > 0  # wall: never zero


async def test_b2_round_trip(servers: dict[str, Server]) -> None:
    sizes = {"rounds": 20, "pairs": 4, "pair_rounds": 3}
    out: dict[str, Any] = {"sizes": sizes}
    for kind, server in servers.items():
        out[kind] = r = await roundtrip(server, **sizes)
        assert 0 < r["p50_ms"] <= r["p99_ms"]
        assert r["throughput_rps"] > 0
    rows = check_rows({"b2": out})
    assert finite(rows[0].ratio) and rows[0].ratio > 0
    assert [r.figure for r in check_store_rows({"b2": {**out, "store": "sqlite"}})][0].startswith("round trip p50")


async def test_b3_memory(servers: dict[str, Server]) -> None:
    sizes = {"questions": 2000, "per_session": 3, "conns": 60, "tabs": 2, "warmup": 50}
    out: dict[str, Any] = {"sizes": sizes}
    for kind, server in against_floor(servers).items():
        out[kind] = r = await memory(server, **sizes)
        assert r["per_question_b"] > 0  # 2,000 questions always grow the heap
        assert finite(r["per_conn_b"])
    check_rows({"b3": out})


async def test_b4_asks_per_second(servers: dict[str, Server]) -> None:
    out: dict[str, Any] = {}
    for kind, server in servers.items():
        # No latency limit: a loaded machine misses B4's 100 ms p99 (a
        # target, not the harness's to check), and then every figure reads 0.
        out[kind] = r = await rate(server, [40], 0.3, users=5, agents=4, p99_limit_ms=math.inf)
        step = r["steps"][0]
        assert step["asks"] > 0 and step["completed"] == step["asks"]  # every ask answered
        assert 0 < step["p50_ms"] <= step["p99_ms"]
        assert step["passed"] and r["max_rate"] == 40
        assert r["cpu_per_ask_us"] >= 0
    check_rows({"b4": out})
    rows = check_store_rows({"b4": {**out, "store": "sqlite"}})
    assert rows[0].figure.startswith("asks/s") and rows[0].target == ">= 0.8x"


@pytest.mark.parametrize("threshold", [0, 30, 199, 200, 201, 777, 5000])
async def test_b4_search_brackets_the_highest_rate_within_its_resolution(threshold: int) -> None:
    """The search on a server that passes every rate up to ``threshold``."""
    probed: list[int] = []

    async def probe(r: int) -> bool:
        probed.append(r)
        return r <= threshold

    lo, hi, n = await find_max(probe, start=50, resolution=25, max_probes=16)  # B4's full bounds
    assert n == len(probed) <= 16 and len(set(probed)) == n  # bounded, and no rate probed twice
    assert lo <= threshold and lo in (0, *probed)
    assert hi is not None and hi > threshold and hi - lo <= 25


@pytest.mark.parametrize("threshold", [5000, 10**9])
async def test_b4_search_gives_its_bracket_when_its_probes_run_out(threshold: int) -> None:
    async def probe(r: int) -> bool:
        return r <= threshold

    lo, hi, n = await find_max(probe, start=50, resolution=25, max_probes=10)
    assert n == 10 and lo <= threshold
    assert hi is None if threshold > 50 * 2**9 else (hi is not None and hi > threshold and hi - lo > 25)


async def test_b4_search_stops_after_its_probes() -> None:
    async def probe(r: int) -> bool:
        return True

    assert await find_max(probe, start=50, resolution=25, max_probes=3) == (200, None, 3)
    assert common_rate([200, 1000], 25) == 150 and common_rate([0, 1000], 25) == 25


def b4_results(servers: dict[str, Any], cases: dict[str, Any] | None = None, r: int = 20) -> dict[str, Any]:
    sizes = {"start": 20, "resolution": 20, "probe_seconds": 0.2, "max_probes": 2, "measure_seconds": 0.2, "repeats": 1}
    return {"b4": {"store": "sqlite", "sizes": sizes, "common_rate": r, **servers, "cases": cases or {}}}


def check_b4_tables(results: dict[str, Any]) -> str:
    text = report.markdown({**results, "machine": report.machine(), "command": "x", "loadavg_before": "0", "loadavg_after": "0"})
    header, body = report.b4_search_table(results["b4"])
    assert body and all(len(row) == len(header) for row in body)
    assert not any(cell in ("nan", "inf") for row in body for cell in row)
    assert "B4 search (resolution 20/s)" in text
    return text


async def test_b4_search_and_cpu_per_ask_at_a_common_rate(servers: dict[str, Server]) -> None:
    """Tiny bounds; no latency limit (a loaded machine's p99 is not the
    harness's to check) but for the floor, whose limit nothing meets, so the
    search's failing path runs too (its figure then reads 0)."""
    out: dict[str, Any] = {}
    for kind, server in servers.items():
        limit, resolution = (-1.0, 10) if kind == "floor" else (math.inf, 20)
        out[kind] = r = await search(server, start=20, resolution=resolution, probe_seconds=0.2, max_probes=2, users=5, agents=4, p99_limit_ms=limit)
        assert r["probes"] == len(r["steps"]) == 2
        for step in r["steps"]:
            assert step["asks"] > 0 and step["completed"] == step["asks"]  # every ask ended, pass or fail
        if limit < 0:
            assert (r["max_rate"], r["ceiling"]) == (0, 10) and [s["rate"] for s in r["steps"]] == [20, 10]
        else:
            assert (r["max_rate"], r["ceiling"]) == (40, None)
        # 10 asks: enough CPU ticks (10 ms each) that no server's figure reads 0.
        r["at_common"] = at = await at_rate(server, 20, 0.5, 1, users=5, agents=4, p99_limit_ms=math.inf)
        assert at["rate"] == 20 and at["passed"] and at["cpu_per_ask_us"] >= 0
    results = b4_results(out)
    rows = check_rows(results)
    assert [r.figure for r in rows][0] == "asks/s sustained with p99 <= 100 ms"
    assert rows[-1].figure == "server CPU per ask at 20/s, both servers (us)"
    stores = check_store_rows(results)
    assert stores[-1].figure == "server CPU per ask at 20/s (us)"
    check_b4_tables(results)


async def test_b2_and_b4_on_approvals_against_askds_plain_question(servers: dict[str, Server]) -> None:
    """An approval, and one with quorum 2 (both users approve): every ask
    ends; the cases' rows set askd against its own plain question."""
    askd = servers["askd"]
    sizes = {"rounds": 5, "pairs": 2, "pair_rounds": 2}
    b2: dict[str, Any] = {"sizes": sizes, "store": "sqlite", "askd": await roundtrip(askd, **sizes), "floor": await roundtrip(servers["floor"], **sizes), "cases": {}}
    b4_cases: dict[str, Any] = {}
    plain_at = await at_rate(askd, 20, 0.2, 1, users=5, agents=4, p99_limit_ms=math.inf)
    for name in ("approval", "quorum2"):
        case = CASES[name]
        r2 = await roundtrip(askd, **sizes, case=case)  # raises unless each round ends answered
        b2["cases"][name] = {"askd": r2}
        assert 0 < r2["p50_ms"] <= r2["p99_ms"] and r2["throughput_rps"] > 0
        got = await search(askd, start=20, resolution=20, probe_seconds=0.2, max_probes=1, users=5, agents=4, p99_limit_ms=math.inf, case=case)
        step = got["steps"][0]
        assert step["asks"] > 0 and step["completed"] == step["asks"]  # the approval that completed the quorum was acked
        got["at_rate"] = await at_rate(askd, 20, 0.2, 1, users=5, agents=4, p99_limit_ms=math.inf, case=case)
        b4_cases[name] = {"rate": 20, "askd": got, "plain_at": plain_at}
    plain = {"max_rate": 20, "ceiling": None, "probes": 1, "cpu_per_ask_us": 1.0, "steps": plain_at["steps"], "at_common": plain_at}
    results = {"b2": b2, **b4_results({"askd": plain, "floor": plain}, b4_cases)}
    rows = report.case_rows(results)
    assert [r.scenario for r in rows] == ["B2 approval"] * 4 + ["B2 quorum2"] * 4 + ["B4 approval"] * 2 + ["B4 quorum2"] * 2
    for row in rows:
        assert finite(row.askd) and row.floor is not None and finite(row.floor), row
    text = check_b4_tables(results)
    assert "The cases (askd on sqlite;" in text and "| askd (sqlite), quorum2 |" in text


def test_b4_runs_end_to_end_from_the_command_line(monkeypatch: pytest.MonkeyPatch, tmp_path: Any, capsys: pytest.CaptureFixture[str]) -> None:
    """``python -m bench b4 --quick --case quorum2`` at tinier bounds: every
    server searched and measured, the tables well-formed (whatever a loaded
    machine's figures are)."""
    monkeypatch.setitem(cli.QUICK, "b4", {"start": 20, "resolution": 20, "probe_seconds": 0.2, "max_probes": 2, "measure_seconds": 0.2, "repeats": 1})
    assert main(["b4", "--quick", "--case", "quorum2", "--json", str(tmp_path / "out.json")]) == 0
    b4 = json.loads((tmp_path / "out.json").read_text())["b4"]
    assert {"askd", "askd_memory", "floor"} <= b4.keys() and list(b4["cases"]) == ["quorum2"]
    assert b4["common_rate"] >= 20 and b4["cases"]["quorum2"]["rate"] >= 20
    for r in (b4["askd"], b4["askd_memory"], b4["floor"], b4["cases"]["quorum2"]["askd"]):
        assert 1 <= r["probes"] <= 2 and r["max_rate"] >= 0
    for r in (b4["askd"], b4["askd_memory"], b4["floor"]):
        assert r["at_common"]["rate"] == b4["common_rate"]
    out = capsys.readouterr().out
    assert "| B4 quorum2 | server CPU per ask at" in out and "B4 search (resolution 20/s)" in out
    assert not any(cell.strip() in ("nan", "inf") for line in out.splitlines() if line.startswith("| B4") for cell in line.split("|"))


async def test_b5_startup_restores_every_question_and_compares_the_stores() -> None:
    out = await startup(questions=300, starts=1)  # raises unless every question is served after each start
    sqlite, mem = out["sqlite"], out["memory"]
    assert [r["cold"] for r in sqlite["runs"]] == [False, True]
    for r in sqlite["runs"]:
        assert 0 < r["listening_s"] <= r["healthz_s"] <= r["served_s"]
        assert r["rss_b"] > sqlite["rss_empty_b"] / 2
    assert sqlite["db_bytes"] > 300 * 600  # each question's frame is in the file
    for figures in (sqlite, mem):
        assert figures["empty_served_s"] > 0 and figures["ask_s"] > 0
        assert figures["rss_asked_b"] > figures["rss_empty_b"] / 2
    rows = check_store_rows({"b5": {"sizes": {"questions": 300}, **out}})
    assert rows[0].target == "<= 3 s"


async def test_b6_two_nodes_on_redis_cross_nodes_and_count_redis_calls() -> None:
    """B6 on two real nodes and a real redis-server: every question crosses
    nodes, both nodes work, Redis's counts add up, everything stops."""
    kw = {"rounds": 30, "pairs": 3, "pair_rounds": 3, "trips": 10, "rates": [40], "step_seconds": 0.3, "users": 4, "agents": 4}
    run = await on_nodes(2, kw)
    b2, trips, b4 = run["b2"], run["trips"], run["b4"]
    assert 0 < b2["p50_ms"] <= b2["p99_ms"] and b2["throughput_rps"] > 0
    seq = b2["phases"]["sequential"]
    assert all(cpu > 0 for cpu in seq["node_cpu_s"])  # the tab's node pushed and took the answers
    assert seq["calls"]["evalsha"] >= 2 * kw["rounds"]  # a commit per ask and per answer
    assert seq["calls"]["xread"] >= kw["rounds"]  # both nodes follow the stream
    assert "info" not in seq["calls"]
    ask, answer = trips["ask"], trips["answer"]
    assert (ask["handler"], answer["handler"]) == ("n1", "n2")  # agent on n1, tab on n2
    for op, other in ((ask, "n2"), (answer, "n1")):
        assert op["sent"][op["handler"]]["evalsha commit"] == 1.0  # one commit per operation, by its node
        assert "evalsha commit" not in op["sent"].get(other, {})
        assert op["sent"][other]["xread"] > 0  # the other node follows too
        assert op["sent"]["lua"]["xadd"] == 1.0  # one stream entry per operation
        assert finite(op["hot_path"]) and op["hot_path"] >= 1
    step = b4["steps"][0]
    assert step["asks"] > 0 and step["completed"] == step["asks"]
    # At a rate, the asks and answers of one loop turn share a commit (the
    # group commit), so only the sequential phase above has one per change.
    assert len(step["phase"]["node_cpu_s"]) == 2 and step["phase"]["calls"]["evalsha"] > 0

    with Server("askd") as sqlite:  # the reference: one askd on its default store
        ref = {"b2": await roundtrip(sqlite, **b6_sizes(kw)[0]), "b4": await rate(sqlite, **b6_sizes(kw)[1])}
    b6 = {"sizes": kw, "sqlite": ref, "runs": [run], "loadavg_at": {"sqlite": "0"}}
    table = report.markdown({"b6": b6, "machine": report.machine(), "command": "x", "loadavg_before": "0", "loadavg_after": "0"})
    assert "| 2 nodes, Redis |" in table and "| 1 node, SQLite |" in table
    for header, body in (report.b6_table(b6), report.b6_trips_table(b6), report.b6_steps_table(b6)):
        assert body and all(len(row) == len(header) for row in body)
        assert not any(cell in ("nan", "inf") for row in body for cell in row)


async def test_b7_a_daemon_exports_every_record_in_both_formats_and_reports_its_rss() -> None:
    out = await audit_export(records=2000)  # raises unless each export holds every record
    assert out["db_bytes"] > 0 and out["fill_s"] > 0 and out["rss_start_b"] > 0
    assert [r["format"] for r in out["runs"]] == ["jsonl", "csv"]
    jsonl, csv = out["runs"]
    assert (jsonl["first_seq"], jsonl["last_seq"]) == (1, 2000)
    for r in out["runs"]:
        assert r["records"] == 2000 and r["bytes"] > 2000 * 100 and r["seconds"] > 0
        assert 0 < r["rss_before_b"] <= r["rss_peak_b"] and r["rss_after_b"] > 0
    text = report.markdown({"b7": out, "machine": report.machine(), "command": "x", "loadavg_before": "0", "loadavg_after": "0"})
    assert "B7 audit export" in text and "| csv | 2,000 |" in text


def test_the_floor_listens_like_askd() -> None:
    assert floor.LISTEN_BACKLOG == LISTEN_BACKLOG


@pytest.mark.parametrize("argv", [["b9"], ["b2", "--store", "redis"], ["b6", "--nodes", "0"], ["b4", "--case", "quorum3"]])
def test_an_unknown_scenario_or_store_is_a_usage_error(argv: list[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2


def test_pieces_times_each_piece_of_a_round_trip() -> None:
    from bench import breakdown

    rows = breakdown.pieces(50)
    names = [name for name, _, _ in rows]
    assert any(n.startswith("SQLite") for n in names) and any(n.startswith("core:") for n in names)
    for name, calls, us in rows:
        assert calls >= 0 and finite(us) and us > 0, name
    assert "**sum of the pieces per round**" in breakdown.table(rows)


async def test_the_unaudited_case_runs_askd_bare_with_no_records() -> None:
    """``bench.serve --bare`` (B2's and B4's ``unaudited`` case): plain
    round trips end answered and the trail holds no record; the same rounds
    on askd as it runs leave an ask and an end each."""
    sizes = {"rounds": 5, "pairs": 2, "pair_rounds": 2}
    rounds = WARMUP_ROUNDS + 5 + 2 * 2
    for bare, records in ((True, 0), (False, 2 * rounds)):
        with Server("askd", bare=bare) as server:
            r = await roundtrip(server, **sizes, case=CASES["unaudited" if bare else "plain"])
            assert r["rounds"] == 5 and r["p50_ms"] > 0
            assert (await admin(server, "GET", "/admin/v1/stats"))["auditRecords"] == records
