"""The JavaScript client's ``verifyReceipt`` on receipts a real ``askd
serve`` made (issue 32, protocol section 16), run through node as an
executor runs it: the receipt of an ended question verifies against the
daemon's own ``/.well-known/jwks.json``, and a tampered payload, another
key and a digest of other content are refused. Each verdict is also
``askd.receipts.verify``'s: the two clients agree, to the message."""

from __future__ import annotations

import asyncio
import base64
import json
import os
import shutil
import subprocess
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from askd import tokens
from askd.client import AsyncAgentClient
from askd.receipts import Keyring, ReceiptError, approval_content, derive_key, digest, receipt_claims, sign, verify
from tests.support.askd_process import Service

ROOT = Path(__file__).resolve().parents[2]
JS = ROOT / "clients" / "js"
SECRET = "jsclient-receipts-secret-0123456789abcdef"
OTHER_SECRET = "another-daemon-secret-0123456789abcdef-0"

# One node process checks every case: {receipt, jwks | url, action?,
# questions?, answers?} in, {claims} or {refused: {reason, message}} out.
VERIFY = """
import { ReceiptError, ReceiptKeys, verifyReceipt } from './dist/index.js';

let input = '';
for await (const chunk of process.stdin) input += chunk;
const out = [];
for (const { receipt, jwks, url, ...options } of JSON.parse(input)) {
  try {
    out.push({ claims: await verifyReceipt(receipt, url ? new ReceiptKeys(url) : jwks, options) });
  } catch (err) {
    if (!(err instanceof ReceiptError)) throw err;
    out.push({ refused: { reason: err.reason, message: err.message } });
  }
}
console.log(JSON.stringify(out));
"""

Verify = Callable[[list[dict[str, Any]]], Awaitable[list[dict[str, Any]]]]


@pytest.fixture(scope="module")
def js_verify(tmp_path_factory: pytest.TempPathFactory) -> Verify:
    """``verifyReceipt`` of clients/js's source, built apart from the checkout
    (its node_modules linked, where ``canonicalize`` resolves from)."""
    modules = JS / "node_modules"
    if shutil.which("node") is None or not (modules / ".bin" / "tsc").exists() or not (modules / "canonicalize").exists():
        why = "needs node and `npm ci` in clients/js (make test-js)"
        if os.environ.get("CI") == "true":
            pytest.fail(why)
        pytest.skip(why)
    here = tmp_path_factory.mktemp("jsverify")
    subprocess.run(
        [str(modules / ".bin" / "tsc"), "-p", "tsconfig.json", "--outDir", str(here / "dist")],
        cwd=JS, check=True, capture_output=True, timeout=300,
    )
    (here / "package.json").write_text('{"type": "module"}\n')
    (here / "node_modules").symlink_to(modules, target_is_directory=True)
    (here / "verify.mjs").write_text(VERIFY)

    async def run(cases: list[dict[str, Any]]) -> list[dict[str, Any]]:
        proc = await asyncio.create_subprocess_exec(
            "node", "verify.mjs", cwd=here,
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        )
        out, err = await asyncio.wait_for(proc.communicate(json.dumps(cases).encode()), 60)
        assert proc.returncode == 0, err.decode()
        got: list[dict[str, Any]] = json.loads(out.decode())
        assert len(got) == len(cases)
        return got

    return run


def python_verdict(case: dict[str, Any], jwks: dict[str, Any]) -> dict[str, Any]:
    """The same case through askd.receipts.verify (the JWKS given, for a URL)."""
    try:
        return {"claims": verify(case["receipt"], case.get("jwks", jwks), action=case.get("action"))}
    except ReceiptError as err:
        return {"refused": str(err)}


def tampered(receipt: str, **changes: Any) -> str:
    head, body, sig = receipt.split(".")
    claims = json.loads(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)))
    forged = base64.urlsafe_b64encode(json.dumps({**claims, **changes}).encode()).rstrip(b"=").decode()
    return f"{head}.{forged}.{sig}"


@pytest.fixture
async def service(tmp_path: Path) -> Any:
    service = Service(tmp_path / "state", env={"ASKD_AUTH__SECRET": SECRET})
    await service.start()
    try:
        yield service
    finally:
        await service.close()


async def served_jwks(service: Service) -> dict[str, Any]:
    async with httpx.AsyncClient() as http:
        r = await http.get(f"{service.url}/.well-known/jwks.json")  # no token
    assert r.status_code == 200, r.text
    return r.json()  # type: ignore[no-any-return]


QUESTIONS = [
    {"question": "Deploy to prod?", "header": "Ship", "options": [{"label": "yes"}, {"label": "no"}]},
    {"question": "Anything else?"},
]


async def test_an_ended_questions_receipt_verifies_in_js_and_what_is_not_it_is_refused(service: Service, js_verify: Verify) -> None:
    agent = tokens.issue(SECRET, "agent")
    async with AsyncAgentClient(service.url, agent) as client:
        key = "the-asking-process-own-host-key-0123456789"  # its own host relays the answer (protocol section 5)
        pending = await client.submit("js-receipts", "alice", QUESTIONS, timeout=120, host_key=key)
        [item] = await client.pending("js-receipts")  # the questions as askd lists them
        answers = {"Deploy to prod?": "yes", "Anything else?": "ça va 🚀"}
        result = await client.answer_for("js-receipts", pending.request_id, "alice", answers, via="mcp", host_key=key)
        withdrawn = await client.submit("js-receipts", "alice", QUESTIONS[1:], timeout=120)
        [later] = await client.pending("js-receipts")
        cancelled = await client.withdraw("js-receipts", withdrawn.request_id)
    assert result is not None and result.status.value == "answered" and result.receipt
    assert cancelled.status.value == "cancelled" and cancelled.receipt

    jwks = await served_jwks(service)
    other = Keyring(derive_key(OTHER_SECRET)).jwks()  # another daemon's keys
    [key] = jwks["keys"]
    impostor = {"keys": [{**other["keys"][0], "kid": key["kid"]}]}  # another key, under this one's kid
    receipt, questions = result.receipt, item["questions"]
    cases = {
        "fetched": {"receipt": receipt, "url": service.url, "questions": questions, "answers": answers},
        "held": {"receipt": receipt, "jwks": jwks, "questions": questions, "answers": answers},
        "cancelled": {"receipt": cancelled.receipt, "url": service.url, "questions": later["questions"], "answers": None},
        "tampered": {"receipt": tampered(receipt, by="mallory"), "jwks": jwks},
        "tampered status": {"receipt": tampered(cancelled.receipt, status="answered"), "url": service.url},
        "another daemon": {"receipt": receipt, "jwks": other},
        "another key": {"receipt": receipt, "jwks": impostor},
        "other answers": {"receipt": receipt, "jwks": jwks, "questions": questions, "answers": {**answers, "Deploy to prod?": "no"}},
        "as an approval": {"receipt": receipt, "jwks": jwks, "action": {"name": "deploy", "arguments": {}}},
    }
    got = dict(zip(cases, await js_verify(list(cases.values()))))

    claims = verify(receipt, jwks)
    assert (claims["status"], claims["by"], claims["via"], claims["rid"]) == ("answered", "alice", "mcp", pending.request_id)
    assert got["fetched"] == got["held"] == {"claims": claims}
    assert got["cancelled"] == {"claims": verify(cancelled.receipt, jwks)}
    assert got["cancelled"]["claims"]["status"] == "cancelled"
    assert got["tampered"]["refused"] == {"reason": "bad_signature", "message": "bad signature"}
    assert got["tampered status"]["refused"]["reason"] == "bad_signature"
    assert got["another daemon"]["refused"] == {"reason": "unknown_kid", "message": f"unknown kid {key['kid']}: no key in the JWKS has it"}
    assert got["another key"]["refused"] == {"reason": "bad_signature", "message": "bad signature"}
    assert got["other answers"]["refused"]["reason"] == "digest_mismatch"
    assert got["as an approval"]["refused"] == {"reason": "not_approved", "message": "not approved"}
    for name in ("tampered", "another daemon", "another key", "as an approval"):  # the same line in both clients
        assert python_verdict(cases[name], jwks) == {"refused": got[name]["refused"]["message"]}, name


async def test_an_approval_receipt_askd_signs_verifies_in_js_only_for_the_action_it_approves(service: Service, js_verify: Verify) -> None:
    """askd asks no approvals yet (protocol section 16): the receipt is signed
    by askd's own signer under the daemon's key (its secret's), and checked
    against the JWKS the daemon serves."""
    keys = Keyring(derive_key(SECRET))
    jwks = await served_jwks(service)
    assert jwks == keys.jwks()
    action = json.loads('{"name": "deploy", "arguments": {"env": "prod", "note": "caf\\u00e9 \\ud83d\\ude80", "n": 18014398509481985, "x": [1.5, null, {"b": 1, "a": true}]}}')

    def receipt(status: str, approved: bool, scope: str | None) -> str:
        claims = receipt_claims(
            iss=None, session_id="deploy-42", request_id="r1", status=status, by="alice", via="link",
            digest=digest(approval_content(action, scope)), ended_at=1796205600.5,
            approval={"approved": approved, "scope": scope, "approvals": ["alice"] if approved else []},
        )
        return sign(claims, keys)

    approved, denied = receipt("answered", True, "always"), receipt("declined", False, None)
    edited = {**action, "arguments": {**action["arguments"], "env": "staging"}}
    cases = {
        "approved": {"receipt": approved, "url": service.url, "action": action},
        "reordered": {"receipt": approved, "jwks": jwks, "action": {"arguments": dict(reversed(list(action["arguments"].items()))), "name": "deploy"}},
        "edited": {"receipt": approved, "jwks": jwks, "action": edited},
        "renamed": {"receipt": approved, "jwks": jwks, "action": {**action, "name": "destroy"}},
        "denied": {"receipt": denied, "url": service.url, "action": action},
        "forged approval": {"receipt": tampered(denied, approved=True, scope="always"), "jwks": jwks, "action": action},
        "another key": {"receipt": approved, "jwks": Keyring(derive_key(OTHER_SECRET)).jwks(), "action": action},
    }
    got = dict(zip(cases, await js_verify(list(cases.values()))))

    assert got["approved"] == got["reordered"] == {"claims": verify(approved, jwks, action=action)}
    assert (got["approved"]["claims"]["approved"], got["approved"]["claims"]["scope"]) == (True, "always")
    for name, reason in [("edited", "digest_mismatch"), ("renamed", "digest_mismatch"), ("denied", "not_approved"),
                         ("forged approval", "bad_signature"), ("another key", "unknown_kid")]:
        assert got[name]["refused"]["reason"] == reason, (name, got[name])
        assert python_verdict(cases[name], jwks) == {"refused": got[name]["refused"]["message"]}, name
