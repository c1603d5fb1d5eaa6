"""``askd audit export`` and ``askd audit verify`` as a person runs them:
real processes against the test's daemon; verify runs offline."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
from pathlib import Path

from tests.cli.test_subprocess import ASKD, RUN_TIMEOUT
from tests.conftest import RunningDaemon


async def askd(daemon: RunningDaemon, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ASKD_")}
    env.update(ASKD_ADMIN_URL=daemon.admin_url, ASKD_ADMIN_TOKEN=daemon.token("admin"), ASKD_STATE_DIR=os.environ["ASKD_STATE_DIR"])
    argv = [*ASKD, "audit", *args]
    return await asyncio.to_thread(subprocess.run, argv, env=env, capture_output=True, text=True, timeout=RUN_TIMEOUT)


async def test_export_then_verify_and_each_tampering_named(daemon: RunningDaemon, tmp_path: Path) -> None:
    for sid in ("s1", "s2", "s3"):
        await daemon.ask(sid, "alice")
    out, head = tmp_path / "trail.jsonl", tmp_path / "head.json"
    r = await askd(daemon, "export", "-o", str(out))
    assert r.returncode == 0, r.stderr
    r = await askd(daemon, "head")
    assert r.returncode == 0, r.stderr
    head.write_text(r.stdout)
    r = await askd(daemon, "verify", str(out), "--head", str(head))
    assert (r.returncode, r.stdout.strip()) == (0, "3 records, seq 1..3, chain intact, ends at the signed head"), r.stderr

    lines = out.read_text().splitlines()
    changed = tmp_path / "changed.jsonl"
    rec = json.loads(lines[1])
    rec["by"] = "mallory"
    changed.write_text("\n".join([lines[0], json.dumps(rec), lines[2]]) + "\n")
    r = await askd(daemon, "verify", str(changed))
    assert (r.returncode, r.stderr.strip()) == (1, "record seq 2 was changed: its hash does not match its content")

    cut = tmp_path / "cut.jsonl"
    cut.write_text("\n".join(lines[:2]) + "\n")
    r = await askd(daemon, "verify", str(cut), "--head", str(head))
    assert r.returncode == 1 and "cut short" in r.stderr

    r = await askd(daemon, "export", "--session", "s2", "--format", "csv")
    assert r.returncode == 0 and r.stdout.splitlines()[0].startswith("seq,at,event")
    assert len(r.stdout.splitlines()) == 2
    filtered = tmp_path / "s2.jsonl"
    assert (await askd(daemon, "export", "--session", "s2", "-o", str(filtered))).returncode == 0
    r = await askd(daemon, "verify", str(filtered), "--filtered")
    assert r.returncode == 0 and "links not checked" in r.stdout
