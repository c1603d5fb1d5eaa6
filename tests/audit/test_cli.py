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


async def test_a_head_is_trusted_only_once_its_signature_holds(daemon: RunningDaemon, tmp_path: Path) -> None:
    """``verify --head`` checks the head's signature first (the daemon's
    JWKS by default, or ``--jwks FILE`` offline) and says which check failed."""
    for sid in ("s1", "s2"):
        await daemon.ask(sid, "alice")
    out = tmp_path / "trail.jsonl"
    assert (await askd(daemon, "export", "-o", str(out))).returncode == 0
    r = await askd(daemon, "head")
    assert r.returncode == 0, r.stderr
    head = json.loads(r.stdout)
    jwks = tmp_path / "jwks.json"
    jwks.write_text((await daemon.http.get(f"{daemon.url}/.well-known/jwks.json")).text)

    def written(name: str, **changed: object) -> str:
        path = tmp_path / name
        path.write_text(json.dumps({**head, **changed}))
        return str(path)

    good = written("head.json")
    r = await askd(daemon, "verify", str(out), "--head", good, "--jwks", str(jwks))
    assert (r.returncode, r.stdout.strip()) == (0, "2 records, seq 1..2, chain intact, ends at the signed head"), r.stderr

    protected, payload, signature = head["signature"].split(".")
    flipped = signature[:10] + ("A" if signature[10] != "A" else "B") + signature[11:]
    corrupted = written("corrupted.json", signature=f"{protected}.{payload}.{flipped}")
    for source in ([], ["--jwks", str(jwks)]):  # the daemon's JWKS, then offline
        r = await askd(daemon, "verify", str(out), "--head", corrupted, *source)
        assert (r.returncode, r.stdout, r.stderr) == (1, "", f"the signed head {corrupted} is refused: bad signature\n")

    moved = written("moved.json", seq=1, hash=json.loads(out.read_text().splitlines()[0])["hash"])
    r = await askd(daemon, "verify", str(out), "--head", moved, "--jwks", str(jwks))
    assert (r.returncode, r.stderr.strip()) == (1, f"the signed head {moved} is refused: the head's seq is not the one its signature signs")

    unsigned = tmp_path / "unsigned.json"
    unsigned.write_text(json.dumps({k: v for k, v in head.items() if k != "signature"}))
    r = await askd(daemon, "verify", str(out), "--head", str(unsigned), "--jwks", str(jwks))
    assert (r.returncode, r.stderr.strip()) == (1, f"the signed head {unsigned} is refused: the head carries no signature")

    other = tmp_path / "other.json"
    other.write_text(json.dumps({"keys": []}))
    r = await askd(daemon, "verify", str(out), "--head", good, "--jwks", str(other))
    assert r.returncode == 1 and r.stderr.startswith(f"the signed head {good} is refused: unknown kid ")


async def test_a_csv_export_verifies_and_a_filtered_one_says_how(daemon: RunningDaemon, tmp_path: Path) -> None:
    """What ``export --format csv`` writes, ``verify`` checks (the same
    records as the NDJSON's); an export by ``--user`` verified without
    ``--filtered`` says it looks filtered and how to check it."""
    await daemon.ask("s1", "alice")
    await daemon.ask("s2", "bob")
    await daemon.ask("s3", "alice")
    trail = tmp_path / "trail.csv"
    assert (await askd(daemon, "export", "--format", "csv", "-o", str(trail))).returncode == 0
    r = await askd(daemon, "verify", str(trail))
    assert (r.returncode, r.stdout.strip()) == (0, "3 records, seq 1..3, chain intact"), r.stderr
    edited = tmp_path / "edited.csv"
    edited.write_text(trail.read_text().replace('""alice""', '""mallory""', 1))  # in seq 1's data (JSON, CSV-quoted)
    r = await askd(daemon, "verify", str(edited))
    assert (r.returncode, r.stderr.strip()) == (1, "record seq 1 was changed: its hash does not match its content")

    for fmt in ("jsonl", "csv"):
        alices = tmp_path / f"alice.{fmt}"
        assert (await askd(daemon, "export", "--user", "alice", "--format", fmt, "-o", str(alices))).returncode == 0
        r = await askd(daemon, "verify", str(alices))
        assert r.returncode == 1
        assert r.stderr.startswith("record seq 2 was removed: seq 1 is followed by seq 3. The export looks filtered: "), r.stderr
        assert "`askd audit verify --filtered FILE`" in r.stderr
        r = await askd(daemon, "verify", str(alices), "--filtered")
        assert (r.returncode, r.stdout.strip()) == (0, "2 records, seq 1..3, each record intact (links not checked: a filtered export)")
