"""``askd hook install|uninstall`` on a temporary HOME: askd's entry merged
into Claude Code's settings, everything else kept, twice the same, an
invalid file left alone (protocol section 18)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from tests.cli.hooks.conftest import ASKD, RUN_TIMEOUT

THEIRS = {
    "model": "opus",
    "permissions": {"allow": ["Bash(npm test)"]},
    "hooks": {
        "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "/usr/local/bin/audit"}]}],
        "PermissionRequest": [{"matcher": "Write", "hooks": [{"type": "command", "command": "/usr/local/bin/notify"}]}],
    },
}


def run(home: Path, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ASKD_")}
    env["HOME"] = str(home)
    return subprocess.run([*ASKD, "hook", *args], env=env, cwd=cwd or home, capture_output=True, text=True, timeout=RUN_TIMEOUT)


def test_install_merges_keeps_everything_else_and_is_idempotent(tmp_path: Path) -> None:
    settings = tmp_path / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(json.dumps(THEIRS))
    done = run(tmp_path, "install", "claude-code", "--to", "alice", "--to", "group:ops")
    assert done.returncode == 0, done.stderr
    data = json.loads(settings.read_text())
    assert {k: v for k, v in data.items() if k != "hooks"} == {"model": "opus", "permissions": {"allow": ["Bash(npm test)"]}}
    assert data["hooks"]["PreToolUse"] == THEIRS["hooks"]["PreToolUse"]
    entries = data["hooks"]["PermissionRequest"]
    assert entries[0] == THEIRS["hooks"]["PermissionRequest"][0]
    ours = entries[1]
    assert ours["matcher"] == "*" and len(ours["hooks"]) == 1
    hook = ours["hooks"][0]
    assert hook["type"] == "command" and hook["timeout"] == 330
    exe, *words = hook["command"].split(" ")
    assert Path(exe).is_absolute() or exe.endswith("python")
    assert words[-6:] == ["hook", "claude-code", "--to", "alice", "--to", "group:ops"]

    before = settings.read_bytes()
    again = run(tmp_path, "install", "claude-code", "--to", "alice", "--to", "group:ops")
    assert again.returncode == 0 and "Already installed" in again.stdout
    assert settings.read_bytes() == before

    longer = run(tmp_path, "install", "claude-code", "--to", "alice", "--timeout", "600")
    assert longer.returncode == 0
    entries = json.loads(settings.read_text())["hooks"]["PermissionRequest"]
    assert len(entries) == 2 and entries[1]["hooks"][0]["timeout"] == 630
    assert entries[1]["hooks"][0]["command"].endswith("hook claude-code --to alice --timeout 600")

    gone = run(tmp_path, "uninstall", "claude-code")
    assert gone.returncode == 0, gone.stderr
    assert json.loads(settings.read_text()) == THEIRS
    twice = run(tmp_path, "uninstall", "claude-code")
    assert twice.returncode == 0 and "Not installed" in twice.stdout
    assert json.loads(settings.read_text()) == THEIRS


def test_install_creates_the_file_and_project_scope(tmp_path: Path) -> None:
    project = tmp_path / "repo"
    project.mkdir()
    done = run(tmp_path, "install", "claude-code", "--to", "alice", "--scope", "project", cwd=project)
    assert done.returncode == 0, done.stderr
    data = json.loads((project / ".claude" / "settings.json").read_text())
    assert len(data["hooks"]["PermissionRequest"]) == 1
    assert not (tmp_path / ".claude").exists()


def test_an_invalid_file_is_left_untouched(tmp_path: Path) -> None:
    settings = tmp_path / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text('{"model": "opus",,}')
    for args in (["install", "claude-code", "--to", "alice"], ["uninstall", "claude-code"]):
        done = run(tmp_path, *args)
        assert done.returncode == 1 and str(settings) in done.stderr and done.stdout == ""
        assert settings.read_text() == '{"model": "opus",,}'


def test_install_codex_prints_the_snippet(tmp_path: Path) -> None:
    done = run(tmp_path, "install", "codex", "--to", "alice")
    assert done.returncode == 0, done.stderr
    assert "[[hooks.PermissionRequest]]" in done.stdout and "hook codex --to alice" in done.stdout
    assert "timeout = 330" in done.stdout
    assert not (tmp_path / ".claude").exists() and not (tmp_path / ".codex").exists()


def test_install_and_uninstall_keep_the_files_layout(tmp_path: Path) -> None:
    """Compact JSON stays compact, a four-space or tab indent stays, no
    final newline stays absent, non-ASCII stays as written: the file reads
    as it did, with askd's entry in it (and, uninstalled, byte for byte)."""
    settings = tmp_path / ".claude" / "settings.json"
    settings.parent.mkdir()
    theirs = {**THEIRS, "statusLine": "café ✓"}
    layouts = [
        {"separators": (",", ":"), "ensure_ascii": False},
        {"indent": 4, "ensure_ascii": False},
        {"indent": "\t", "ensure_ascii": True},
        {"separators": (", ", ": "), "ensure_ascii": True},
    ]
    for layout in layouts:
        for end in ("\n", ""):
            written = json.dumps(theirs, **layout) + end  # type: ignore[arg-type]
            settings.write_text(written, encoding="utf-8")
            assert run(tmp_path, "install", "claude-code", "--to", "alice").returncode == 0
            after = settings.read_text(encoding="utf-8")
            data = json.loads(after)
            assert after == json.dumps(data, **layout) + end, (layout, end)  # type: ignore[arg-type]
            assert data["hooks"]["PermissionRequest"][-1]["hooks"][0]["command"].endswith("hook claude-code --to alice")
            assert run(tmp_path, "uninstall", "claude-code").returncode == 0
            assert settings.read_text(encoding="utf-8") == written, (layout, end)


def test_a_new_settings_file_is_indented_by_two(tmp_path: Path) -> None:
    assert run(tmp_path, "install", "claude-code", "--to", "alice").returncode == 0
    text = (tmp_path / ".claude" / "settings.json").read_text()
    assert text == json.dumps(json.loads(text), indent=2, ensure_ascii=False) + "\n"
