"""``askd.cli.main`` runs ``askd hook claude-code|codex`` and ``askd
--version`` without Typer (``hook_run.fast``) only for the command lines
whose meaning is plain; Typer parses every other one, as it always has. Both
ways give the hook the same arguments."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from askd.cli import hook_run
from askd.cli.main import app
from askd.cli.hook_event import CLAUDE, CODEX


@pytest.fixture
def runs(monkeypatch: pytest.MonkeyPatch) -> list[tuple[Any, ...]]:
    from askd.cli import hook  # the Typer commands, which call the same run_hook

    seen: list[tuple[Any, ...]] = []
    for module in (hook_run, hook):
        monkeypatch.setattr(module, "run_hook", lambda *args: seen.append(args))
    return seen


@pytest.mark.parametrize(
    "argv",
    [
        ["hook", "claude-code", "--help"],
        ["hook", "claude-code", "-h"],
        ["--url", "http://x", "hook", "claude-code"],
        ["hook", "claude-code", "--to=alice"],
        ["hook", "claude-code", "--to", "alice", "--verbose"],  # an unknown word: Typer ignores it
        ["hook", "claude-code", "--to"],  # no value: Typer's usage error
        ["hook", "claude-code", "--to", "--timeout"],
        ["hook", "install", "claude-code"],
        ["hook", "gemini"],
        ["hook"],
    ],
)
def test_other_command_lines_are_left_to_typer(argv: list[str], runs: list[tuple[Any, ...]]) -> None:
    assert hook_run.fast(argv) is False
    assert runs == []


def test_a_directory_given_as_a_file_is_left_to_typer(tmp_path: Path, runs: list[tuple[Any, ...]]) -> None:
    assert hook_run.fast(["hook", "codex", "--cacert", str(tmp_path)]) is False
    assert hook_run.fast(["hook", "codex", "--config", str(tmp_path)]) is False
    assert runs == []


def test_the_fast_start_gives_the_hook_what_typer_gives_it(tmp_path: Path, runs: list[tuple[Any, ...]]) -> None:
    argv = [
        "hook", "claude-code", "--to", "alice", "--to", "group:ops,bob", "--timeout", "30", "--timeout", "45",
        "--url", "http://127.0.0.1:1", "--token", "t", "--cacert", str(tmp_path / "ca.pem"), "--config", str(tmp_path / "c.toml"),
    ]
    assert hook_run.fast(argv) is True
    assert hook_run.fast(["hook", "codex"]) is True
    fast = list(runs)
    runs.clear()
    for args in (argv, ["hook", "codex"]):
        result = CliRunner().invoke(app, args, input="")
        assert result.exit_code == 0, result.output
    assert runs == fast
    assert fast == [
        (CLAUDE, ["alice", "group:ops,bob"], "45", "http://127.0.0.1:1", "t", tmp_path / "ca.pem", tmp_path / "c.toml"),
        (CODEX, [], "300", None, None, None, None),
    ]


def test_version_says_what_the_root_option_says() -> None:
    fast = subprocess.run([sys.executable, "-m", "askd.cli.main", "--version"], capture_output=True, text=True, timeout=60, check=True)
    typer_way = CliRunner().invoke(app, ["--version"])
    assert (typer_way.exit_code, typer_way.output) == (0, fast.stdout)
    assert fast.stdout.startswith("askd ") and fast.stderr == ""
