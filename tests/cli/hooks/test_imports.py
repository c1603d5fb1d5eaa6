"""What ``askd hook claude-code`` loads on its hot path (read the event, ask,
wait, print the decision), run as the agent runs it against a real daemon
and approved there; the modules are read from ``sys.modules`` as the
process exits. Every permission prompt pays for each of them (their time
is measured in bench/cli_start.py, not here).

"The client" here means exactly: askd's HTTP agent client, the modules
``askd.client.agent_calls`` (the calls, as sans-I/O flows), ``http`` (their
driving over httpx), ``discovery``, ``errors``, ``backoff`` and ``results``
(the ``Result`` dataclass, read without pydantic), with what they import
of askd (``askd.state``, ``askd.protocol.codec`` and ``status``) and
httpx with its own dependencies (httpcore, h11, anyio, sniffio, certifi,
idna), plus orjson (the codec). Of the CLI, only the entry point and the
hook's own modules. No Typer, no pydantic, no WebSocket client, no other
command.

Given its URL and token, the hook loads that and the standard library,
nothing else. Finding the daemon through ``askd.json`` and minting a token
from the secret (as an installed hook does) adds the settings
(``askd.config``) and ``askd.tokens``, and still none of the rest."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.cli.hooks.conftest import RUN_TIMEOUT, Served, event_text
from tests.cli.hooks.test_hook_daemon import ALLOW, approve

# The hook's own modules and the client's (the docstring says why each).
ASKD_MODULES = {
    "askd", "askd.cli", "askd.cli.main", "askd.cli.errors", "askd.cli.root_options",
    "askd.cli.hook_run", "askd.cli.hook_ask", "askd.cli.hook_event", "askd.cli.hook_install",
    "askd.client", "askd.client.agent_calls", "askd.client.http", "askd.client.discovery",
    "askd.client.errors", "askd.client.backoff", "askd.client.results",
    "askd.state", "askd.protocol", "askd.protocol.codec", "askd.protocol.status",
}
HTTP_STACK = {"httpx", "httpcore", "h11", "anyio", "sniffio", "certifi", "idna", "orjson"}
# httpx's optional content decoders: httpx imports them whenever they are
# installed (the test extra's frameworks bring zstandard, through langsmith).
HTTP_STACK |= {"zstandard", "brotli", "brotlicffi"}
# What the interpreter's start brings whatever runs (setuptools' hook, the
# editable install's finder).
STARTUP = {"_distutils_hack", "sitecustomize", "usercustomize"}
NEVER = {"typer", "click", "rich", "pydantic", "pydantic_core", "websockets", "tornado", "jsonschema"}

# Runs the hook as the ``askd`` script does, writing sys.modules at exit.
RUN = (
    "import atexit, json, sys\n"
    "out = sys.argv.pop(1)\n"
    "atexit.register(lambda: open(out, 'w').write(json.dumps(sorted(sys.modules))))\n"
    "from askd.cli.main import main\n"
    "main()\n"
)


def hook_modules(served: Served, tmp_path: Path, env: dict[str, str]) -> set[str]:
    out = tmp_path / "modules.json"
    proc = subprocess.Popen(
        [sys.executable, "-c", RUN, str(out), "hook", "claude-code", "--to", "alice"], env={**served.env, **env},
        cwd=tmp_path, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    assert proc.stdin is not None
    proc.stdin.write(event_text("claude_bash"))
    proc.stdin.close()
    proc.stdin = None
    approve(served, served.wait_pending("claude-" + json.loads(event_text("claude_bash"))["session_id"]))
    stdout, stderr = proc.communicate(timeout=RUN_TIMEOUT)
    assert (proc.returncode, json.loads(stdout)) == (0, ALLOW), stderr
    return set(json.loads(out.read_text()))


def outside(modules: set[str]) -> list[str]:
    """The modules that are neither the standard library, the start's, nor
    the client's and the hook's."""
    return sorted(
        m for m in modules
        if m not in ASKD_MODULES
        and m.split(".")[0] not in sys.stdlib_module_names | HTTP_STACK | STARTUP
        and not m.startswith("__editable__")
        and m != "__main__"
    )


def test_given_its_url_and_token_the_hook_loads_the_client_and_the_standard_library_only(served: Served, tmp_path: Path) -> None:
    env = {"ASKD_URL": f"http://127.0.0.1:{served.info['port']}", "ASKD_AGENT_TOKEN": served._token("agent")()}
    modules = hook_modules(served, tmp_path, env)
    assert outside(modules) == []
    assert "askd.client.agent_calls" in modules and "httpx" in modules  # the test saw the hook's run


def loaded_by(*names: str) -> set[str]:
    """The modules importing ``names`` loads in a fresh interpreter."""
    code = f"import json, sys\nimport {', '.join(names)}\nprint(json.dumps(sorted(sys.modules)))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=RUN_TIMEOUT, check=True)
    return set(json.loads(done.stdout))


def test_finding_the_daemon_adds_the_settings_and_the_token_code_and_nothing_else(served: Served, tmp_path: Path) -> None:
    modules = hook_modules(served, tmp_path, {})
    assert "askd.config" in modules and "askd.tokens" in modules  # found, and minted
    assert outside(modules - loaded_by("askd.config", "askd.tokens")) == []
    assert not {m.split(".")[0] for m in modules} & (NEVER - {"pydantic", "pydantic_core"})  # the settings are pydantic's
    assert not modules & {"askd.protocol.models", "askd.protocol.results", "askd.cli.root", "askd.cli.hook"}
