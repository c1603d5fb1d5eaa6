"""``askd pending approve`` / ``deny`` (protocol section 17) through Typer's
runner against a live daemon, as ``test_commands`` runs the other commands."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.cli.test_commands import askd, local, one_error_line  # noqa: F401 (fixture)
from tests.conftest import RunningDaemon

ARGS = {"service": "web", "env": "staging"}
SCHEMA = {"type": "object", "properties": {"env": {"enum": ["staging", "production"]}}, "required": ["env"]}


async def ask_action(daemon: RunningDaemon, quorum: int | None = None, **action: Any) -> str:
    body: dict[str, Any] = {"userId": "alice", "action": {"name": "deploy", "arguments": ARGS, **action}}
    if quorum is not None:
        body["quorum"] = quorum
    r = await daemon.http.post(f"{daemon.url}/v1/sessions/s1/questions", json=body, headers=daemon.agent_headers)
    assert r.status_code == 201, r.text
    return str(r.json()["requestId"])


async def test_approve_ends_it_approved(local: RunningDaemon) -> None:  # noqa: F811
    rid = await ask_action(local, allowAlways=True)
    r = await askd("pending", "list")
    assert "approve deploy (0 of 1)" in r.stdout
    r = await askd("pending", "approve", "s1", rid, "--always")
    assert (r.exit_code, r.stdout) == (0, f"Approved {rid} in session s1: 1 of 1 approvals, it is approved.\n"), r.stderr
    result = (await local.result("s1", rid)).json()
    assert (result["status"], result["approved"], result["scope"], result["via"]) == ("answered", True, "always", "admin")


async def test_approve_with_edited_arguments_from_a_file_and_json(local: RunningDaemon, tmp_path: Path) -> None:  # noqa: F811
    rid = await ask_action(local, editable=True, schema=SCHEMA)
    edited = {"service": "web", "env": "production"}
    (tmp_path / "args.json").write_text(json.dumps(edited))
    r = await askd("pending", "approve", "s1", rid, "--arguments", f"@{tmp_path / 'args.json'}", "--json")
    assert r.exit_code == 0, r.stderr
    assert json.loads(r.stdout) == {"accepted": True, "approvals": 1, "needed": 1}
    result = (await local.result("s1", rid)).json()
    assert (result["arguments"], result["edited"]) == (edited, True)


async def test_a_quorum_reports_progress_and_one_approver_twice_is_one_line(local: RunningDaemon) -> None:  # noqa: F811
    rid = await ask_action(local, quorum=2)
    # The local admin token has no sub: no person, so it fills no seat of a quorum (protocol section 17).
    assert "cannot fill a quorum seat" in one_error_line(await askd("pending", "approve", "s1", rid))
    as_alice = {"ASKD_ADMIN_TOKEN": local.token("admin", "alice")}
    r = await askd("pending", "approve", "s1", rid, env=as_alice)
    assert (r.exit_code, r.stdout) == (0, f"Approved {rid} in session s1: 1 of 2 approvals, 1 more needed.\n"), r.stderr
    assert "already" in one_error_line(await askd("pending", "approve", "s1", rid, env=as_alice))
    assert (await local.result("s1", rid)).json()["status"] == "pending"


async def test_errors_from_the_daemon_are_one_line(local: RunningDaemon) -> None:  # noqa: F811
    rid = await ask_action(local, editable=True, schema=SCHEMA)
    line = one_error_line(await askd("pending", "approve", "s1", rid, "--arguments", '{"env": "moon"}'))
    assert "env" in line
    line = one_error_line(await askd("pending", "approve", "s1", rid, "--always"))
    assert "always" in line.lower()
    one_error_line(await askd("pending", "approve", "s1", "nope"))
    assert (await local.result("s1", rid)).json()["status"] == "pending"


@pytest.mark.parametrize("value", ["{not json", '["a"]', "@/no/such/file.json"], ids=["bad-json", "not-object", "no-file"])
async def test_bad_arguments_are_usage_errors(local: RunningDaemon, value: str) -> None:  # noqa: F811
    rid = await ask_action(local, editable=True)
    one_error_line(await askd("pending", "approve", "s1", rid, "--arguments", value), 2)
    assert (await local.result("s1", rid)).json()["status"] == "pending"


async def test_deny_ends_it_declined_with_the_reason(local: RunningDaemon) -> None:  # noqa: F811
    rid = await ask_action(local, quorum=3)
    r = await askd("pending", "deny", "s1", rid, "--reason", "not today")
    assert (r.exit_code, r.stdout) == (0, f"Denied {rid} in session s1.\n"), r.stderr
    result = (await local.result("s1", rid)).json()
    assert (result["status"], result["approved"], result["reason"]) == ("declined", False, "not today")


async def test_show_renders_the_action_and_the_quorum(local: RunningDaemon) -> None:  # noqa: F811
    rid = await ask_action(local, quorum=2, summary="Ship **v2**", preview="image: web:v1 → web:v2", allowAlways=True)
    assert (await askd("pending", "approve", "s1", rid, env={"ASKD_ADMIN_TOKEN": local.token("admin", "ops")})).exit_code == 0
    r = await askd("pending", "show", "s1", rid)
    assert r.exit_code == 0, r.stderr
    assert "Approve deploy?" in r.stdout and "Ship v2" in r.stdout and '"env": "staging"' in r.stdout
    assert "web:v1 → web:v2" in r.stdout and "1 of 2 approvals: ops" in r.stdout and "approve always offered" in r.stdout
    r = await askd("pending", "show", "s1", rid, "--json")
    assert json.loads(r.stdout)["action"]["name"] == "deploy"


async def test_pending_shows_a_trojan_source_command_with_its_controls_marked(local: RunningDaemon) -> None:  # noqa: F811
    """``cat README.md ⁧; echo PWNED #⁩`` reads as ``cat README.md # echo
    PWNED ;`` in a terminal that reorders it: the table and ``show`` print
    each control as its mark, under a warning (protocol section 17)."""
    command = "cat README.md \u2067; echo PWNED #\u2069"
    shown = "cat README.md ⟨U+2067⟩; echo PWNED #⟨U+2069⟩"
    rid = await ask_action(local, name="Bash\u200b", arguments={"command": command}, preview=command)
    r = await askd("pending", "list")
    assert r.exit_code == 0, r.stderr
    assert "approve Bash⟨U+200B⟩ (0 of 1)" in r.stdout
    assert "! This text has hidden or reordering characters" in r.stdout
    assert not any(c in r.stdout for c in "\u2067\u2069\u200b")
    r = await askd("pending", "show", "s1", rid)
    assert r.exit_code == 0, r.stderr
    assert r.stdout.startswith("! This text has hidden or reordering characters")
    assert "Approve Bash⟨U+200B⟩?" in r.stdout and f'"command": "{shown}"' in r.stdout and shown in r.stdout.split("Preview:")[1]
    assert not any(c in r.stdout for c in "\u2067\u2069\u200b")
    r = await askd("pending", "show", "s1", rid, "--json")  # data stays as asked
    assert json.loads(r.stdout)["action"]["arguments"] == {"command": command}
