"""``askd hook install|uninstall``: askd's entry in Claude Code's settings
JSON, merged without touching anything else (the file's layout kept:
indent, separators, escapes, a final newline), and Codex's snippet."""

from __future__ import annotations

import copy
import json
import os
import re
import shlex
import shutil
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from askd.cli.errors import fail
from askd.protocol import codec

DEFAULT_TIMEOUT = 300.0
AGENT_GRACE_SECONDS = 30  # the agent's hook timeout outlives askd's question


def settings_path(scope: str) -> Path:
    if scope == "user":
        return Path.home() / ".claude" / "settings.json"
    if scope == "project":
        return Path.cwd() / ".claude" / "settings.json"
    fail(f"--scope {scope!r}: expected user or project", 1)


def askd_path() -> str:
    """This askd's absolute path: agents run hooks without our PATH."""
    me = Path(sys.argv[0])
    if me.name.startswith("askd") and me.exists():
        return str(me.resolve())
    found = shutil.which("askd")
    if found:
        return str(Path(found).resolve())
    return f"{sys.executable} -m askd.cli.main"


def hook_command(agent: str, to: list[str], timeout: float) -> str:
    words = [w for t in to for w in ("--to", t)]
    if timeout != DEFAULT_TIMEOUT:
        words += ["--timeout", f"{timeout:g}"]
    exe = askd_path()
    head = exe if " -m " in exe else shlex.quote(exe)
    return " ".join([head, "hook", agent, *(shlex.quote(w) for w in words)])


def agent_timeout(timeout: float) -> int:
    return int(-(-timeout // 1)) + AGENT_GRACE_SECONDS


def _is_ours(hook: Any) -> bool:
    return isinstance(hook, dict) and isinstance(hook.get("command"), str) and " hook claude-code" in hook["command"]


@dataclass(frozen=True)
class Layout:
    """How a settings file is written, kept when askd rewrites it: people
    edit it by hand too, and a compact file stays compact."""

    indent: int | str | None = 2
    separators: tuple[str, str] = (",", ": ")
    ensure_ascii: bool = False
    newline_at_end: bool = True

    def dumps(self, data: Any) -> str:
        text = json.dumps(data, indent=self.indent, separators=self.separators, ensure_ascii=self.ensure_ascii)
        return text + ("\n" if self.newline_at_end else "")


NEW_FILE = Layout()  # a file askd creates: indented by two


def layout_of(text: str, data: Any) -> Layout:
    """The layout ``text`` (holding ``data``) was written in: the one that
    writes it back byte for byte, else its indent (the first indented
    line's) and its separators as the text shows them."""
    end = text.endswith("\n")
    body = text.rstrip("\n")
    first = re.search(r"\n([ \t]+)\S", body)
    indent: int | str | None = None
    if first is not None:
        unit = first.group(1)
        indent = len(unit) if set(unit) == {" "} else unit
    for ensure_ascii in (False, True):
        for separators in ((",", ": "), (",", ":"), (", ", ": "), (", ", ":")):
            candidate = Layout(indent, separators, ensure_ascii, end)
            if candidate.dumps(data).rstrip("\n") == body:
                return candidate
    item = "," if indent is not None or not re.search(r",\s", body) else ", "
    key = ": " if re.search(r'":\s', body) else ":"
    return Layout(indent, (item, key), False, end)


def _read(path: Path) -> tuple[dict[str, Any], Layout]:
    if not path.exists():
        return {}, NEW_FILE
    try:
        text = path.read_text(encoding="utf-8")
        data = codec.loads(text or "{}")
    except (ValueError, UnicodeDecodeError) as err:
        fail(f"{path} is not valid JSON ({err}); left it untouched", 1)
    if not isinstance(data, dict):
        fail(f"{path} is not a JSON object; left it untouched", 1)
    return data, layout_of(text, data) if text.strip() else NEW_FILE


def _write(path: Path, data: dict[str, Any], layout: Layout) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".settings.", suffix=".tmp")
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(layout.dumps(data))
    os.replace(tmp, path)


def _entries(data: dict[str, Any], path: Path) -> list[Any]:
    hooks = data.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        fail(f"{path}: \"hooks\" is not an object; left it untouched", 1)
    entries = hooks.setdefault("PermissionRequest", [])
    if not isinstance(entries, list):
        fail(f"{path}: \"hooks.PermissionRequest\" is not a list; left it untouched", 1)
    return entries


def install(path: Path, command: str, timeout: int) -> bool:
    """Merge askd's entry; True when the file changed."""
    data, layout = _read(path)
    before = copy.deepcopy(data)
    entries = _entries(data, path)
    ours = {"matcher": "*", "hooks": [{"type": "command", "command": command, "timeout": timeout}]}
    spots = [i for i, e in enumerate(entries) if isinstance(e, dict) and any(_is_ours(h) for h in e.get("hooks") or [])]
    if spots:  # replace askd's entry in place (new --to or timeout), drop any copies
        entries[spots[0]] = ours
        for i in reversed(spots[1:]):
            del entries[i]
    else:
        entries.append(ours)
    if data == before:
        return False
    _write(path, data, layout)
    return True


def uninstall(path: Path) -> bool:
    """Remove askd's hook and nothing else; True when the file changed."""
    if not path.exists():
        return False
    data, layout = _read(path)
    hooks = data.get("hooks")
    entries = hooks.get("PermissionRequest") if isinstance(hooks, dict) else None
    if not isinstance(entries, list):
        return False
    kept: list[Any] = []
    for entry in entries:
        inner = entry.get("hooks") if isinstance(entry, dict) else None
        if not isinstance(inner, list) or not any(_is_ours(h) for h in inner):
            kept.append(entry)
            continue
        others = [h for h in inner if not _is_ours(h)]
        if others:  # someone else's hook shares the entry: keep theirs
            kept.append({**entry, "hooks": others})
    if kept == entries:
        return False
    if kept:
        hooks["PermissionRequest"] = kept
    else:
        del hooks["PermissionRequest"]
    _write(path, data, layout)
    return True


def codex_snippet(command: str, timeout: int) -> str:
    hooks = {"hooks": {"PermissionRequest": [{"matcher": ".*", "hooks": [{"type": "command", "command": command, "timeout": timeout}]}]}}
    # A TOML basic string: with every non-ASCII character escaped, a JSON
    # string is one; the snippet is printed for people, hence the indent.
    toml_command = json.dumps(command)
    return (
        "# ~/.codex/hooks.json\n"
        + json.dumps(hooks, indent=2)
        + "\n\n# or, in ~/.codex/config.toml:\n"
        + '[[hooks.PermissionRequest]]\nmatcher = ".*"\n\n'
        + "[[hooks.PermissionRequest.hooks]]\n"
        + f'type = "command"\ncommand = {toml_command}\ntimeout = {timeout}\n'
    )
