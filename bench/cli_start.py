"""B8, the command's start: the CPU seconds (user + system, of the process
and its children) and the import time (``python -X importtime``, the sum of
the top-level imports) of ``askd --version`` and of ``askd hook
claude-code`` / ``codex`` on their hot path (read the event, ask, wait for
the answer, print the decision), each run ``runs`` times; the minimum and
the median are reported. The hook runs against a real daemon (bench.proc)
whose approval is given over the admin API as soon as it is pending, twice:
with ``ASKD_URL`` and ``ASKD_AGENT_TOKEN`` given, and finding the daemon
and minting its token from the state directory as an installed hook does
(``askd hook install`` writes neither).

``python -m bench.cli_start [--runs N] [--source DIR] [--json FILE]``:
``--source`` measures another checkout's askd (a ``git clone`` of an
earlier commit) with this interpreter and its packages, for a before and
after (docs/performance.md, "The command's start")."""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import httpx

from askd import tokens
from bench.proc import SECRET, Server

EVENT = json.dumps({
    "hook_event_name": "PermissionRequest", "session_id": "bench-b8", "cwd": "/tmp",
    "tool_name": "Bash", "tool_input": {"command": "ls"}, "permission_suggestions": [],
})
HOOK_TIMEOUT_S = 60.0


def source_tree(checkout: Path, into: Path) -> Path:
    """The import layout of ``checkout`` (askd/, with cli/ and config/ as
    askd.cli and askd.config, as pyproject maps them), to put first on
    PYTHONPATH: the installed metadata (the version) stays this one's."""
    shutil.copytree(checkout / "askd", into / "askd")
    shutil.copytree(checkout / "cli", into / "askd" / "cli")
    shutil.copytree(checkout / "config", into / "askd" / "config")
    return into


def cpu_of(argv: list[str], env: dict[str, str], cwd: Path, stdin: str = "") -> tuple[float, subprocess.CompletedProcess[str]]:
    """The CPU seconds of one run. ``cwd`` is not a checkout: ``python -m``
    puts it first on sys.path, where it would win over ``--source``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(argv, input=stdin, env=env, cwd=cwd, capture_output=True, text=True, timeout=HOOK_TIMEOUT_S)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), done


def import_seconds(stderr: str) -> tuple[float, list[tuple[str, float]]]:
    """The sum of the top-level imports' cumulative times, and the five
    costliest top-level packages, from ``-X importtime``'s lines."""
    top: dict[str, float] = {}
    for line in stderr.splitlines():
        if not line.startswith("import time:") or "|" not in line:
            continue
        _, cumulative, name = line[len("import time:"):].split("|")
        if cumulative.strip().isdigit() and not name.startswith("  "):  # the top level: one space
            package = name.strip().split(".")[0]
            top[package] = top.get(package, 0.0) + int(cumulative) / 1e6
    return sum(top.values()), sorted(top.items(), key=lambda kv: -kv[1])[:5]


class Approver:
    """Approves every pending approval of the bench's session over the admin API."""

    def __init__(self, server: Server) -> None:
        auth = {"Authorization": f"Bearer {tokens.issue(SECRET, 'admin')}"}
        self._http = httpx.Client(base_url=f"http://127.0.0.1:{server.admin_port}/admin/v1", headers=auth, timeout=10.0)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            for q in self._http.get("/pending").json().get("pending", []):
                self._http.post(f"/sessions/{q['sessionId']}/questions/{q['requestId']}/approve", json={})
            self._stop.wait(0.01)

    def close(self) -> None:
        self._stop.set()
        self._thread.join()
        self._http.close()


def measure(argv: list[str], env: dict[str, str], cwd: Path, runs: int, stdin: str = "", expect: str = "") -> dict[str, Any]:
    """CPU over ``runs`` runs; the import time of the median of three more
    runs under ``-X importtime`` (its own clock: wall time, in the process)."""
    cpus = []
    for _ in range(runs):
        cpu, done = cpu_of(argv, env, cwd, stdin)
        if done.returncode != 0 or expect not in done.stdout:
            raise RuntimeError(f"{argv}: exit {done.returncode}, {done.stdout!r} {done.stderr[-500:]!r}")
        cpus.append(cpu)
    timed = sorted(import_seconds(cpu_of([argv[0], "-X", "importtime", *argv[1:]], env, cwd, stdin)[1].stderr) for _ in range(3))
    imports, costliest = timed[1]
    return {"cpu_min_s": min(cpus), "cpu_median_s": statistics.median(cpus), "imports_s": imports, "costliest": costliest}


def cli_start(runs: int = 10, source: Path | None = None) -> dict[str, Any]:
    askd = [sys.executable, "-m", "askd.cli.main"]
    base = {k: v for k, v in os.environ.items() if not k.startswith("ASKD_")}
    work = Path(tempfile.mkdtemp(prefix="bench-b8-"))
    try:
        if source is not None:
            base["PYTHONPATH"] = str(source_tree(source, work / "tree"))
        out: dict[str, Any] = {"runs": runs, "source": str(source or "this checkout")}
        out["--version"] = measure([*askd, "--version"], base, work, runs, expect="askd ")
        with Server("askd") as server:
            approver = Approver(server)
            try:
                given = {**base, "ASKD_URL": f"http://127.0.0.1:{server.port}", "ASKD_AGENT_TOKEN": tokens.issue(SECRET, "agent")}
                found = {**base, "ASKD_STATE_DIR": str(server.state_dir), "ASKD_AUTH__SECRET": SECRET}
                for agent in ("claude-code", "codex"):
                    hook = [*askd, "hook", agent, "--to", "alice"]
                    out[f"hook {agent}"] = measure(hook, given, work, runs, EVENT, expect='"allow"')
                hook = [*askd, "hook", "claude-code", "--to", "alice"]
                out["hook claude-code, found"] = measure(hook, found, work, runs, EVENT, expect='"allow"')
            finally:
                approver.close()
        return out
    finally:
        shutil.rmtree(work, ignore_errors=True)


def table(results: dict[str, Any]) -> str:
    rows = ["| command | CPU, min | CPU, median | imports | costliest imports |", "|---|---:|---:|---:|---|"]
    for name, r in results.items():
        if isinstance(r, dict):
            costliest = ", ".join(f"{p} {s * 1000:.0f}" for p, s in r["costliest"])
            rows.append(
                f"| `askd {name}` | {r['cpu_min_s'] * 1000:.0f} ms | {r['cpu_median_s'] * 1000:.0f} ms "
                f"| {r['imports_s'] * 1000:.0f} ms | {costliest} |"
            )
    return "\n".join(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--source", type=Path, help="another checkout's askd, measured with this interpreter")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    results = cli_start(args.runs, args.source)
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n")
    print(table(results))


if __name__ == "__main__":
    main()
