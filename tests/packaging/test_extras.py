"""The agent frameworks' extras (protocol section 21) from the built wheel,
in fresh venvs that see nothing of the project's: each extra resolves on
its own (pip's resolver, ``--dry-run``: no conflict among what it pulls
in), and all of them install together, after which every adapter imports
and ``import askd.client`` (or ``askd.integrations``) still loads no
framework. Slow: pip resolves and installs from its cache or the index.

Opt-in (``ASKD_TEST_EXTRAS=1``, or ``make test-extras``): on the two-core CI
machine its six minutes of pip, beside the suite's four workers, starved
the multi-node tests' daemons past their start timeout. The adapters'
own tests (tests/integrations) run in every ``make test``."""

from __future__ import annotations

import json
import os
import subprocess
import venv
from pathlib import Path

import pytest

pytestmark = [
    pytest.mark.packaging,
    pytest.mark.slow,
    pytest.mark.skipif(os.environ.get("ASKD_TEST_EXTRAS") != "1", reason="opt-in: ASKD_TEST_EXTRAS=1 (make test-extras)"),
]

# Each extra and the adapter module it serves.
EXTRAS = {
    "pydantic-ai": "askd.integrations.pydantic_ai",
    "openai-agents": "askd.integrations.openai_agents",
    "langgraph": "askd.integrations.langgraph",
    "claude-agent-sdk": "askd.integrations.claude_agent_sdk",
}
# The top-level modules of the frameworks those extras install.
FRAMEWORKS = ("pydantic_ai", "agents", "langgraph", "langchain", "langchain_core", "claude_agent_sdk", "openai")

PIP = ("-m", "pip", "--disable-pip-version-check", "--no-input")


def _venv(path: Path) -> Path:
    venv.EnvBuilder(with_pip=True, clear=True).create(path)
    return path / "bin" / "python"


def _pip(py: Path, *args: str, timeout: float = 900) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run([str(py), *PIP, *args], capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return proc


def test_each_extra_resolves_alone(tmp_path: Path, dists: dict[str, Path]) -> None:
    py = _venv(tmp_path / "alone")
    for extra in EXTRAS:
        report = tmp_path / f"{extra}.json"
        _pip(py, "install", "--quiet", "--dry-run", "--ignore-installed", "--report", str(report), f"askd[{extra}] @ {dists['wheel'].as_uri()}")
        names = {item["metadata"]["name"].lower() for item in json.loads(report.read_text())["install"]}
        assert "askd" in names, extra
        wanted = {"pydantic-ai": "pydantic-ai-slim", "openai-agents": "openai-agents", "langgraph": "langgraph", "claude-agent-sdk": "claude-agent-sdk"}[extra]
        assert wanted in names, (extra, sorted(names))


def test_every_extra_installs_together_and_the_client_loads_no_framework(tmp_path: Path, dists: dict[str, Path]) -> None:
    py = _venv(tmp_path / "together")
    _pip(py, "install", "--quiet", f"askd[{','.join(EXTRAS)}] @ {dists['wheel'].as_uri()}")
    check = (
        "import importlib, json, sys\n"
        "import askd.client, askd.integrations\n"
        f"frameworks = {FRAMEWORKS!r}\n"
        "before = sorted(m for m in sys.modules if m.split('.')[0] in frameworks)\n"
        f"for module in {list(EXTRAS.values())!r}:\n"
        "    importlib.import_module(module)\n"
        "print(json.dumps(before))\n"
    )
    proc = subprocess.run([str(py), "-c", check], capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert json.loads(proc.stdout.strip().splitlines()[-1]) == []  # the client and the package face: no framework
