"""The agents' side of ``askd hook``: the ``PermissionRequest`` event read
from stdin, the approval asked for it (summary, preview) and the decision
JSON printed back, for Claude Code and Codex (protocol section 18). Pure:
no I/O here, so every shape is tested without a daemon."""

from __future__ import annotations

import difflib
import json
from dataclasses import dataclass, field
from typing import Any

from askd.protocol import codec

EVENT = "PermissionRequest"
PREVIEW_MAX_BYTES = 32 * 1024  # the action's preview limit (protocol section 17)
WRITE_LINES = 200


@dataclass(frozen=True)
class Agent:
    key: str  # the CLI's name: ``claude-code`` / ``codex``
    label: str  # in the summary
    prefix: str  # of askd's session id
    updates_permissions: bool  # Claude Code takes updatedPermissions; Codex refuses it


CLAUDE = Agent("claude-code", "Claude Code", "claude", True)
CODEX = Agent("codex", "Codex", "codex", False)
AGENTS = {a.key: a for a in (CLAUDE, CODEX)}


class BadEvent(ValueError):
    """stdin is not a usable event: the hook falls back to the agent's dialog."""


@dataclass(frozen=True)
class Event:
    session_id: str
    tool_name: str
    tool_input: dict[str, Any]
    cwd: str | None = None
    suggestions: list[Any] = field(default_factory=list)


def read_event(text: str) -> Event | None:
    """The event, or None for another ``hook_event_name`` (not ours to answer)."""
    try:
        data = codec.loads(text)
    except ValueError as err:
        raise BadEvent(f"stdin is not JSON ({err})") from None
    if not isinstance(data, dict):
        raise BadEvent("stdin is not a JSON object")
    if data.get("hook_event_name") != EVENT:
        return None
    session, tool, args = data.get("session_id"), data.get("tool_name"), data.get("tool_input")
    if not isinstance(session, str) or not session:
        raise BadEvent("the event has no session_id")
    if not isinstance(tool, str) or not tool:
        raise BadEvent("the event has no tool_name")
    if args is None:
        args = {}
    if not isinstance(args, dict):
        raise BadEvent("the event's tool_input is not an object")
    cwd = data.get("cwd")
    suggestions = data.get("permission_suggestions")
    return Event(session, tool, args, cwd if isinstance(cwd, str) else None, suggestions if isinstance(suggestions, list) else [])


def session_of(agent: Agent, event: Event) -> str:
    return f"{agent.prefix}-{event.session_id}"


def summary(agent: Agent, event: Event) -> str:
    where = f" in `{event.cwd}`" if event.cwd else ""
    return f"**{agent.label}** asks to use **{event.tool_name}**{where}."


def _fence(body: str, lang: str = "") -> str:
    """A code block whose fence is longer than any backtick run inside."""
    longest, run = 0, 0
    for ch in body:
        run = run + 1 if ch == "`" else 0
        longest = max(longest, run)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{lang}\n{body.rstrip(chr(10))}\n{fence}"


def _diff(path: str, old: str, new: str) -> str:
    lines = difflib.unified_diff(old.splitlines(keepends=True), new.splitlines(keepends=True), path, path)
    return "".join(line if line.endswith("\n") else line + "\n" for line in lines)


def _str(value: Any) -> str:
    return value if isinstance(value, str) else ""


def preview(event: Event) -> str:
    """What a person judges on a phone: the command, the edit as a diff,
    the file's first lines; the arguments as JSON for any other tool."""
    args, tool = event.tool_input, event.tool_name
    path = _str(args.get("file_path"))
    if tool == "Bash" and isinstance(args.get("command"), str):
        text = _fence(args["command"], "bash")
    elif tool == "Edit" and path:
        text = f"`{path}`\n\n" + _fence(_diff(path, _str(args.get("old_string")), _str(args.get("new_string"))), "diff")
    elif tool == "MultiEdit" and path and isinstance(args.get("edits"), list):
        diffs = [_diff(path, _str(e.get("old_string")), _str(e.get("new_string"))) for e in args["edits"] if isinstance(e, dict)]
        text = f"`{path}`\n\n" + _fence("".join(diffs), "diff")
    elif tool == "Write" and path:
        lines = _str(args.get("content")).splitlines()
        more = f"\n\n… {len(lines) - WRITE_LINES} more lines" if len(lines) > WRITE_LINES else ""
        text = f"`{path}`\n\n" + _fence("\n".join(lines[:WRITE_LINES])) + more
    else:
        # Indented for people to read, not the codec's compact form.
        text = _fence(json.dumps(args, indent=2, ensure_ascii=False), "json")
    return _cut(text)


def _cut(text: str) -> str:
    """Within the preview's byte limit, cut on a character boundary."""
    raw = text.encode()
    if len(raw) <= PREVIEW_MAX_BYTES:
        return text
    return raw[: PREVIEW_MAX_BYTES - 16].decode(errors="ignore") + "\n… (cut)"


def action(agent: Agent, event: Event) -> dict[str, Any]:
    """The ask's ``action`` (protocol section 17)."""
    return {
        "name": event.tool_name,
        "arguments": event.tool_input,
        "summary": summary(agent, event),
        "preview": preview(event),
        "allowAlways": bool(event.suggestions),
    }


def allow(agent: Agent, event: Event, scope: str | None) -> dict[str, Any]:
    decision: dict[str, Any] = {"behavior": "allow"}
    if agent.updates_permissions and scope == "always" and event.suggestions:
        decision["updatedPermissions"] = event.suggestions
    return {"hookSpecificOutput": {"hookEventName": EVENT, "decision": decision}}


def deny(who: str | None, reason: str | None) -> dict[str, Any]:
    message = f"{who or 'an admin'} denied it" + (f": {reason}" if reason else "")
    return {"hookSpecificOutput": {"hookEventName": EVENT, "decision": {"behavior": "deny", "message": message}}}
