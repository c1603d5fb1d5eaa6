"""The README's quick start shows the two commands that put Claude Code's
prompts on a phone; they run as written: the first installs the hook that
asks alice, the second prints a one-time link to alice's inbox."""

from __future__ import annotations

import json
import re
import shlex
import subprocess
from pathlib import Path

from tests.cli.hooks.conftest import ASKD, RUN_TIMEOUT, Served

README = Path(__file__).resolve().parents[3] / "README.md"


def quick_start_commands() -> list[list[str]]:
    """The ``.venv/bin/askd hook install`` and ``askd open`` lines of the
    README's quick start, comments dropped."""
    section = README.read_text(encoding="utf-8").split("## Quick start", 1)[1].split("\n## ", 1)[0]
    lines = re.findall(r"^\.venv/bin/askd (?:hook install|open) .*$", section, re.MULTILINE)
    return [shlex.split(line, comments=True)[1:] for line in lines]


def test_the_quick_start_shows_both_commands() -> None:
    commands = quick_start_commands()
    assert [c[:3] for c in commands] == [["hook", "install", "claude-code"], ["open", "--user", "alice"]]
    assert "--to" in commands[0] and commands[0][commands[0].index("--to") + 1] == "alice"


def test_the_quick_start_commands_run_as_written(served: Served, tmp_path: Path) -> None:
    env = {**served.env, "HOME": str(tmp_path)}
    install, open_inbox = quick_start_commands()
    done = subprocess.run([*ASKD, *install], env=env, capture_output=True, text=True, timeout=RUN_TIMEOUT)
    assert done.returncode == 0, done.stderr
    settings = json.loads((tmp_path / ".claude" / "settings.json").read_text())
    [entry] = settings["hooks"]["PermissionRequest"]
    assert entry["hooks"][0]["command"].endswith("hook claude-code --to alice")

    done = subprocess.run([*ASKD, *open_inbox], env=env, capture_output=True, text=True, timeout=RUN_TIMEOUT)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"http://127.0.0.1:{served.info['port']}/#code="), done.stdout
