"""``askd receipt verify`` as a user runs it: a real process, against the
test's daemon (its JWKS found through ASKD_URL, or given as a file or URL)."""

from __future__ import annotations

import asyncio
import base64
import json
import os
import subprocess
from pathlib import Path
from typing import Any

from askd.receipts import approval_content, digest, keyring, receipt_claims, sign
from tests.cli.test_subprocess import ASKD, RUN_TIMEOUT
from tests.conftest import SECRET, RunningDaemon
from tests.receipts.independent import b64


async def askd(daemon: RunningDaemon, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    """The command in its own process; the daemon runs in this test's loop, so the wait is off it."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ASKD_")}
    env.update(ASKD_URL=daemon.url, ASKD_STATE_DIR=os.environ["ASKD_STATE_DIR"])
    argv = [*ASKD, "receipt", "verify", *args]
    return await asyncio.to_thread(subprocess.run, argv, env=env, input=stdin, capture_output=True, text=True, timeout=RUN_TIMEOUT)


async def receipt_of_an_answer(daemon: RunningDaemon) -> dict[str, Any]:
    key = "the-asking-process-own-host-key-0123456789"  # the ask lets its own host relay (protocol section 5)
    rid = (await daemon.ask("s1", hostKey=key))["requestId"]
    body = {"answers": {"Which database?": "Postgres"}, "answeredBy": "alice", "hostKey": key}
    r = await daemon.http.post(f"{daemon.url}/v1/sessions/s1/questions/{rid}/answer", json=body, headers=daemon.agent_headers)
    return r.json()  # type: ignore[no-any-return]


def refused(r: subprocess.CompletedProcess[str], why: str) -> None:
    assert r.returncode == 1, r.stderr
    assert r.stdout == ""
    assert r.stderr.splitlines() == [f"askd: receipt refused: {why}"]


async def test_a_good_receipt_exits_0_with_its_claims_from_the_daemons_jwks(daemon: RunningDaemon, tmp_path: Path) -> None:
    result = await receipt_of_an_answer(daemon)
    r = await askd(daemon, result["receipt"])
    assert r.returncode == 0, r.stderr
    claims = json.loads(r.stdout)
    assert (claims["rid"], claims["status"], claims["by"], claims["via"]) == (result["requestId"], "answered", "alice", "mcp")
    # From stdin, with the JWKS as a URL, then as a file.
    assert json.loads((await askd(daemon, "-", "--jwks", f"{daemon.url}/.well-known/jwks.json", stdin=result["receipt"] + "\n")).stdout) == claims
    jwks = tmp_path / "jwks.json"
    jwks.write_text((await daemon.http.get(f"{daemon.url}/.well-known/jwks.json")).text)
    assert json.loads((await askd(daemon, result["receipt"], "--jwks", str(jwks))).stdout) == claims


async def test_a_tampered_receipt_exits_1_with_one_line(daemon: RunningDaemon) -> None:
    head, body, sig = (await receipt_of_an_answer(daemon))["receipt"].split(".")
    claims = json.loads(b64(body))
    claims["by"] = "mallory"
    forged = base64.urlsafe_b64encode(json.dumps(claims).encode()).rstrip(b"=").decode()
    refused(await askd(daemon, f"{head}.{forged}.{sig}"), "bad signature")


async def test_a_receipt_of_another_key_exits_1_unknown_kid(daemon: RunningDaemon) -> None:
    other = keyring(SECRET + "-another-daemon")
    receipt = sign(receipt_claims(iss=None, session_id="s", request_id="r", status="answered", by=None, via=None,
                                  digest=digest(None), ended_at=0.0), other)
    refused(await askd(daemon, receipt), f"unknown kid {other.kid}: no key in the JWKS has it")


async def test_with_an_action_a_question_receipt_is_not_an_approval(daemon: RunningDaemon, tmp_path: Path) -> None:
    action = tmp_path / "action.json"
    action.write_text(json.dumps({"name": "deploy", "arguments": {"env": "prod"}}))
    refused(await askd(daemon, (await receipt_of_an_answer(daemon))["receipt"], "--action", str(action)), "not approved")
    # An approval's receipt (as section N will sign them) signed by this daemon's key: the action must match.
    ring = keyring(SECRET)
    approved = {"approved": True, "scope": "once", "approvals": ["alice"]}
    receipt = sign(receipt_claims(iss=None, session_id="s", request_id="r", status="answered", by="alice", via="ws",
                                  digest=digest(approval_content({"name": "deploy", "arguments": {"env": "prod"}}, "once")),
                                  ended_at=0.0, approval=approved), ring)
    assert (await askd(daemon, receipt, "--action", str(action))).returncode == 0
    action.write_text(json.dumps({"name": "deploy", "arguments": {"env": "staging"}}))
    refused(await askd(daemon, receipt, "--action", str(action)), "digest mismatch: the receipt is for another action or other arguments")


async def test_an_unreachable_jwks_is_one_line(daemon: RunningDaemon, tmp_path: Path) -> None:
    r = await askd(daemon, "x.y.z", "--jwks", str(tmp_path / "missing.json"))
    assert r.returncode == 1 and len(r.stderr.splitlines()) == 1 and "cannot read the JWKS file" in r.stderr
