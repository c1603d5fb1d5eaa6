"""The hook's pure half: events read, previews a person judges on a phone,
and the decision JSON each agent expects (protocol section 18)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from askd.cli.hook import audience, decision
from askd.cli.hook_event import CLAUDE, CODEX, PREVIEW_MAX_BYTES, BadEvent, action, allow, deny, preview, read_event, session_of
from askd.client import Result, Status

EVENTS = Path(__file__).with_name("events")


def event(name: str, **changes: object):  # type: ignore[no-untyped-def]
    data = json.loads((EVENTS / f"{name}.json").read_text())
    data.update(changes)
    got = read_event(json.dumps(data))
    assert got is not None
    return got


def test_the_recorded_events_read() -> None:
    e = event("claude_bash")
    assert (e.session_id, e.tool_name, e.cwd) == ("abc123", "Bash", "/Users/me/my-project")
    assert e.suggestions[0]["type"] == "addRules"
    assert session_of(CLAUDE, e) == "claude-abc123"
    c = event("codex_bash")
    assert session_of(CODEX, c) == "codex-019a7c1e-5d2f-7b40-9a51-3f2d8c6e4b10"
    assert c.suggestions == []


def test_other_events_are_not_ours() -> None:
    assert read_event((EVENTS / "claude_pretooluse.json").read_text()) is None


@pytest.mark.parametrize("text", ["", "not json", "[]", '{"hook_event_name": "PermissionRequest"}',
                                  '{"hook_event_name": "PermissionRequest", "session_id": "s", "tool_name": "Bash", "tool_input": 3}'])
def test_bad_input_is_refused(text: str) -> None:
    with pytest.raises(BadEvent):
        read_event(text)


def test_bash_preview_is_the_command() -> None:
    assert preview(event("claude_bash")) == "```bash\nrm -rf node_modules\n```"


def test_edit_preview_is_a_unified_diff_under_the_path() -> None:
    text = preview(event("claude_edit"))
    assert text.startswith("`/Users/me/my-project/src/app.py`\n\n```diff\n")
    assert "--- /Users/me/my-project/src/app.py\n+++ /Users/me/my-project/src/app.py\n" in text
    assert "-def greet():\n" in text and "+def greet(name):\n" in text


def test_multiedit_diffs_each_edit() -> None:
    e = event("claude_edit", tool_name="MultiEdit", tool_input={
        "file_path": "/p/a.txt", "edits": [{"old_string": "a", "new_string": "b"}, {"old_string": "x", "new_string": "y"}]})
    text = preview(e)
    assert text.count("--- /p/a.txt") == 2 and "-a\n+b\n" in text and "-x\n+y\n" in text


def test_write_preview_is_the_first_200_lines() -> None:
    content = "\n".join(f"line {i}" for i in range(1, 251))
    text = preview(event("claude_edit", tool_name="Write", tool_input={"file_path": "/p/new.py", "content": content}))
    assert text.startswith("`/p/new.py`\n\n```\nline 1\n")
    assert "line 200\n```" in text and "line 201" not in text and "50 more lines" in text


def test_other_tools_show_the_arguments_as_json_and_fences_hold() -> None:
    e = event("claude_edit", tool_name="mcp__github__merge_pr", tool_input={"pr": 7, "note": "```"})
    assert preview(e).startswith("````json\n{\n  \"pr\": 7")
    huge = event("claude_bash", tool_input={"command": "é" * PREVIEW_MAX_BYTES})
    assert len(preview(huge).encode()) <= PREVIEW_MAX_BYTES


def test_the_action_asked() -> None:
    a = action(CLAUDE, event("claude_bash"))
    assert a["name"] == "Bash" and a["arguments"]["command"] == "rm -rf node_modules"
    assert "Claude Code" in a["summary"] and "Bash" in a["summary"] and "/Users/me/my-project" in a["summary"]
    assert a["allowAlways"] is True
    assert action(CODEX, event("codex_bash"))["allowAlways"] is False


def test_outputs() -> None:
    e = event("claude_bash")
    plain = {"hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": {"behavior": "allow"}}}
    assert allow(CLAUDE, e, "once") == plain
    always = allow(CLAUDE, e, "always")["hookSpecificOutput"]["decision"]
    assert always == {"behavior": "allow", "updatedPermissions": e.suggestions}
    assert allow(CODEX, e, "always") == plain  # Codex refuses updatedPermissions
    assert deny("alice", "not on main")["hookSpecificOutput"]["decision"] == {"behavior": "deny", "message": "alice denied it: not on main"}
    assert deny(None, None)["hookSpecificOutput"]["decision"]["message"] == "an admin denied it"


def _result(status: Status, **raw: object) -> Result:
    return Result("r1", "claude-abc123", status, raw=dict(raw))


def test_no_decision_without_one(capsys: pytest.CaptureFixture[str]) -> None:
    e = event("claude_bash")
    assert decision(CLAUDE, e, _result(Status.timeout)) is None
    assert decision(CLAUDE, e, _result(Status.cancelled)) is None
    # answered but not approved (never expected): still no allow
    assert decision(CLAUDE, e, Result("r1", "claude-abc123", Status.answered, approved=False)) is None
    assert len(capsys.readouterr().err.strip().splitlines()) == 3


def test_audience(monkeypatch: pytest.MonkeyPatch) -> None:
    assert audience(["alice,bob", "group:ops"]) == ["alice", "bob", "group:ops"]
    monkeypatch.setenv("ASKD_HOOK_TO", "carol, group:leads")
    assert audience([]) == ["carol", "group:leads"]
