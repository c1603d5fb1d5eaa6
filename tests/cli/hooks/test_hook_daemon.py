"""``askd hook`` as Claude Code and Codex run it: a process with the event
on stdin, a real daemon, a person answering through the admin API; its
stdout and exit code checked exactly (protocol section 18)."""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import time

import pytest

from askd.client.errors import AuthError

from tests.cli.hooks.conftest import ASKD, RUN_TIMEOUT, Served, event_text

ALLOW = {"hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": {"behavior": "allow"}}}


def finish(proc: subprocess.Popen[str], stdin: str | None = None) -> tuple[int, str, str]:
    out, err = proc.communicate(stdin, timeout=RUN_TIMEOUT)
    return proc.returncode, out, err


def start(served: Served, agent: str, event: str, *args: str) -> tuple[subprocess.Popen[str], dict]:  # type: ignore[type-arg]
    """The hook, its event sent and stdin closed, and the question it asked."""
    proc = served.hook(agent, "--to", "alice", *args)
    assert proc.stdin is not None
    proc.stdin.write(event)
    proc.stdin.close()
    proc.stdin = None  # communicate() then only reads
    session = ("claude-" if agent == "claude-code" else "codex-") + json.loads(event)["session_id"]
    return proc, served.wait_pending(session)


def approve(served: Served, pending: dict, **body: object) -> None:  # type: ignore[type-arg]
    r = served.admin("POST", f"/sessions/{pending['sessionId']}/questions/{pending['requestId']}/approve", body)
    assert r.status_code == 200, r.text


def test_claude_bash_approved_once(served: Served) -> None:
    proc, pending = start(served, "claude-code", event_text("claude_bash"))
    action = pending["action"]
    assert action["name"] == "Bash" and action["arguments"]["command"] == "rm -rf node_modules"
    assert action["preview"] == "```bash\nrm -rf node_modules\n```" and action["allowAlways"] is True
    assert "Claude Code" in action["summary"]
    approve(served, pending)
    code, out, err = finish(proc)
    assert (code, json.loads(out)) == (0, ALLOW), err
    assert out.count("\n") == 1


def test_claude_approved_always_carries_its_own_suggestions(served: Served) -> None:
    text = event_text("claude_bash")
    proc, pending = start(served, "claude-code", text)
    approve(served, pending, scope="always")
    code, out, _ = finish(proc)
    decision = json.loads(out)["hookSpecificOutput"]["decision"]
    assert code == 0 and decision == {"behavior": "allow", "updatedPermissions": json.loads(text)["permission_suggestions"]}


def test_codex_approved_always_never_gets_updated_permissions(served: Served) -> None:
    text = event_text("codex_bash", permission_suggestions=[{"type": "setMode", "mode": "acceptEdits", "destination": "session"}])
    proc, pending = start(served, "codex", text)
    assert pending["action"]["preview"] == "```bash\ncargo test --workspace\n```"
    approve(served, pending, scope="always")
    code, out, _ = finish(proc)
    assert (code, json.loads(out)) == (0, ALLOW)


def test_denied_with_a_reason(served: Served) -> None:
    proc, pending = start(served, "codex", event_text("codex_bash"))
    r = served.admin("POST", f"/sessions/{pending['sessionId']}/questions/{pending['requestId']}/decline", {"reason": "not on main"})
    assert r.status_code in (200, 204), r.text
    code, out, _ = finish(proc)
    decision = json.loads(out)["hookSpecificOutput"]["decision"]
    assert code == 0 and decision["behavior"] == "deny" and decision["message"].endswith("denied it: not on main")


def test_another_agents_token_cannot_approve_a_hook_prompt(served: Served) -> None:
    """A token without a ``sub`` (as `askd ask` and `askd mcp` mint locally)
    reaches every session, yet the hook asked without a hostKey: no agent
    token may approve for the person, `always` or not (protocol section 5)."""
    proc, pending = start(served, "claude-code", event_text("claude_bash"))
    sid, rid = pending["sessionId"], pending["requestId"]
    with served.agent() as other:  # another process's token, no sub
        for key in (None, "k" * 43):
            with pytest.raises(AuthError) as refused:
                other.approve_for(sid, rid, "alice", scope="always", host_key=key)
            assert (refused.value.status, refused.value.code) == (403, "forbidden")
            assert "asked without hostKey" in refused.value.message
        assert [p["approvals"] for p in other.pending(sid)] == [[]]  # nothing changed
    r = served.admin("POST", f"/sessions/{sid}/questions/{rid}/decline", {"reason": "no"})
    assert r.status_code == 200, r.text
    code, out, _ = finish(proc)
    assert code == 0 and json.loads(out)["hookSpecificOutput"]["decision"]["behavior"] == "deny"


def test_edit_is_a_diff_on_the_page(served: Served) -> None:
    proc, pending = start(served, "claude-code", event_text("claude_edit"))
    assert "+def greet(name):" in pending["action"]["preview"] and pending["action"].get("allowAlways", False) is False
    proc.send_signal(signal.SIGTERM)
    finish(proc)


def test_timeout_prints_nothing(served: Served) -> None:
    proc, _ = start(served, "claude-code", event_text("claude_bash"), "--timeout", "1")
    code, out, err = finish(proc)
    assert (code, out) == (0, "") and len(err.strip().splitlines()) == 1 and "no answer" in err


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP])
def test_ended_by_the_agent_withdraws_the_question(served: Served, sig: signal.Signals) -> None:
    proc, pending = start(served, "claude-code", event_text("claude_bash"))
    time.sleep(0.3)  # waiting on the long-poll
    proc.send_signal(sig)
    code, out, err = finish(proc)
    assert (code, out) == (0, ""), err
    with served.agent() as agent:
        assert agent.result(pending["sessionId"], pending["requestId"]).status == "cancelled"


def test_other_events_and_bad_input_print_nothing(served: Served) -> None:
    for text in [event_text("claude_pretooluse"), "not json", '{"hook_event_name": "PermissionRequest"}']:
        code, out, err = finish(served.hook("claude-code", "--to", "alice"), text)
        assert (code, out) == (0, ""), err
    with served.agent() as agent:
        assert agent.pending("claude-abc123") == []


def test_a_refused_token_prints_nothing(served: Served) -> None:
    proc = served.hook("claude-code", "--to", "alice", env={"ASKD_AGENT_TOKEN": "not-a-token"})
    code, out, err = finish(proc, event_text("claude_bash"))
    assert (code, out) == (0, "") and "token" in err and len(err.strip().splitlines()) == 1


def test_askd_unreachable_prints_nothing_within_15_s(served: Served) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    began = time.monotonic()
    proc = served.hook("codex", "--to", "alice", env={"ASKD_URL": f"http://127.0.0.1:{port}"})
    code, out, err = finish(proc, event_text("codex_bash"))
    assert (code, out) == (0, "") and "cannot reach askd" in err
    assert time.monotonic() - began < 15


def test_nobody_to_ask_prints_nothing(served: Served) -> None:
    proc = subprocess.Popen(
        [*ASKD, "hook", "claude-code"], env=served.env,
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    code, out, err = finish(proc, event_text("claude_bash"))
    assert (code, out) == (0, "") and "ASKD_HOOK_TO" in err


def test_the_hook_rides_a_daemon_restart(served: Served) -> None:
    proc, pending = start(served, "claude-code", event_text("claude_bash"))
    served.restart()  # a clean stop and a new process on the same ports and state
    time.sleep(1.0)
    assert proc.poll() is None
    approve(served, served.wait_pending(pending["sessionId"]))
    code, out, err = finish(proc)
    assert (code, json.loads(out)) == (0, ALLOW), err


def _tab(served: Served, user: str):  # type: ignore[no-untyped-def]
    from websockets.sync.client import connect

    token = subprocess.run(
        [*ASKD, "token", "issue", "--role", "user", "--sub", user],
        env=served.env, capture_output=True, text=True, timeout=RUN_TIMEOUT,
    ).stdout.strip()
    return connect(f"ws://127.0.0.1:{served.info['port']}/ws", additional_headers={"Authorization": f"Bearer {token}"})


def _frame(tab, kind: str) -> dict:  # type: ignore[no-untyped-def, type-arg]
    deadline = time.monotonic() + RUN_TIMEOUT
    while True:
        frame = json.loads(tab.recv(timeout=max(0.1, deadline - time.monotonic())))
        if frame["type"] == kind:
            return frame  # type: ignore[no-any-return]


def test_a_tab_approves_always_and_a_tab_sees_the_withdrawal(served: Served) -> None:
    with _tab(served, "alice") as tab:
        text = event_text("claude_bash")
        proc, pending = start(served, "claude-code", text)
        asked = _frame(tab, "ask_user_questions")["payload"]
        assert asked["requestId"] == pending["requestId"] and asked["action"]["name"] == "Bash"
        tab.send(json.dumps({"type": "approve", "sessionId": pending["sessionId"], "requestId": pending["requestId"], "scope": "always", "id": "a1"}))
        code, out, _ = finish(proc)
        decision = json.loads(out)["hookSpecificOutput"]["decision"]
        assert code == 0 and decision["updatedPermissions"] == json.loads(text)["permission_suggestions"]

        proc, pending = start(served, "codex", event_text("codex_bash"))
        assert _frame(tab, "ask_user_questions")["payload"]["requestId"] == pending["requestId"]
        time.sleep(0.3)
        proc.send_signal(signal.SIGTERM)
        closed = _frame(tab, "ask_user_questions_cancelled")["payload"]
        assert (closed["requestId"], closed["reason"]) == (pending["requestId"], "cancelled")
        assert finish(proc)[:2] == (0, "")


def test_an_askd_that_never_answers_is_given_up_within_15_s(served: Served) -> None:
    with socket.socket() as s:  # accepts connections (the kernel's backlog), never answers
        s.bind(("127.0.0.1", 0))
        s.listen(8)
        began = time.monotonic()
        proc = served.hook("claude-code", "--to", "alice", env={"ASKD_URL": f"http://127.0.0.1:{s.getsockname()[1]}"})
        code, out, err = finish(proc, event_text("claude_bash"))
    assert (code, out) == (0, "") and len(err.strip().splitlines()) == 1
    assert time.monotonic() - began < 15
