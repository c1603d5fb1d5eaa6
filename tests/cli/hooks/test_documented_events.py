"""The hook on the agents' own documented examples (tests/cli/hooks/events/,
README.md there names where each comes from): Claude Code's hooks-reference
events as printed, and Codex's events and decisions checked against the
JSON schemas Codex generates for its PermissionRequest hook."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from askd.cli.hook_event import read_event
from tests.cli.hooks.conftest import EVENTS, Served, event_text
from tests.cli.hooks.test_hook_daemon import ALLOW, approve, finish, start

CLAUDE_DOCS = ["claude_docs_bash", "claude_docs_bash_tool_always_allow"]
CODEX_SCHEMA = EVENTS / "codex_schema"


def schema(name: str) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((CODEX_SCHEMA / f"permission-request.command.{name}.schema.json").read_text())
    return loaded


@pytest.mark.parametrize("name", CLAUDE_DOCS)
def test_claude_docs_events_read(name: str) -> None:
    e = read_event((EVENTS / f"{name}.json").read_text())
    assert e is not None and (e.session_id, e.tool_name, e.cwd) == ("abc123", "Bash", "/Users/...")


@pytest.mark.parametrize("name", CLAUDE_DOCS)
def test_claude_docs_event_approved_once(served: Served, name: str) -> None:
    proc, pending = start(served, "claude-code", event_text(name))
    assert pending["action"]["preview"] == "```bash\nrm -rf node_modules\n```"
    approve(served, pending)
    code, out, err = finish(proc)
    assert (code, json.loads(out)) == (0, ALLOW), err


@pytest.mark.parametrize("name", CLAUDE_DOCS)
def test_claude_docs_event_approved_always_hands_back_its_suggestions(served: Served, name: str) -> None:
    text = event_text(name)
    proc, pending = start(served, "claude-code", text)
    assert pending["action"]["allowAlways"] is True
    approve(served, pending, scope="always")
    code, out, _ = finish(proc)
    decision = json.loads(out)["hookSpecificOutput"]["decision"]
    assert code == 0 and decision == {"behavior": "allow", "updatedPermissions": json.loads(text)["permission_suggestions"]}


def test_the_codex_event_fits_codex_input_schema() -> None:
    """codex_bash.json is modelled (Codex's docs print no whole event): it
    must at least be an event Codex's own schema accepts."""
    jsonschema.validate(json.loads((EVENTS / "codex_bash.json").read_text()), schema("input"))


def test_codex_decisions_fit_codex_output_schema(served: Served) -> None:
    suggestion = {"type": "addRules", "rules": [{"type": "prefixRule", "command": ["cargo", "test"]}],
                  "behavior": "allow", "destination": "session"}
    proc, pending = start(served, "codex", event_text("codex_bash", permission_suggestions=[suggestion]))
    approve(served, pending, scope="always")  # Codex still gets a plain allow
    code, out, _ = finish(proc)
    assert (code, json.loads(out)) == (0, ALLOW)
    jsonschema.validate(json.loads(out), schema("output"))

    proc, pending = start(served, "codex", event_text("codex_bash", turn_id="t2"))
    r = served.admin("POST", f"/sessions/{pending['sessionId']}/questions/{pending['requestId']}/decline", {"reason": "not on main"})
    assert r.status_code in (200, 204), r.text
    code, out, _ = finish(proc)
    assert code == 0 and json.loads(out)["hookSpecificOutput"]["decision"]["behavior"] == "deny"
    jsonschema.validate(json.loads(out), schema("output"))


def test_the_codex_schemas_are_the_recorded_ones() -> None:
    """Kept verbatim: the titles Codex gives them, and nothing added."""
    assert schema("input")["title"] == "permission-request.command.input"
    assert schema("output")["title"] == "permission-request.command.output"
    assert sorted(p.name for p in CODEX_SCHEMA.iterdir()) == [
        "permission-request.command.input.schema.json", "permission-request.command.output.schema.json"]


def test_every_fixture_is_named_in_the_readme() -> None:
    readme = (EVENTS / "README.md").read_text()
    for path in sorted(Path(EVENTS).glob("*.json")):
        assert f"`{path.name}`" in readme, f"{path.name} is not described in tests/cli/hooks/events/README.md"
