"""The check every shipped form of askd must pass, run against an installed
``askd`` (a fresh venv's console script, or the one-file binary) in an
environment of its own: ``--version``, ``serve`` on port 0, the web page's
files, one ask/answer round trip through the CLI, and a clean stop."""

from __future__ import annotations

import json
import signal
import subprocess
import time
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parents[2]
STATIC = ROOT / "askd" / "web" / "static"
START_TIMEOUT = 30.0  # a cold one-file binary unpacks itself first, on a busy 2-core machine
CMD_TIMEOUT = 60.0


def project_version() -> str:
    """The one version source: pyproject.toml."""
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]


@dataclass
class Installed:
    """An installed ``askd`` executable and the environment it runs in."""

    exe: Path
    env: dict[str, str]
    state_dir: Path
    logs: Path  # where the started processes' stderr goes

    def run(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        proc = subprocess.run(
            [str(self.exe), *args], env=self.env, cwd=self.logs, capture_output=True, text=True, timeout=CMD_TIMEOUT, stdin=subprocess.DEVNULL
        )
        if check:
            assert proc.returncode == 0, f"askd {' '.join(args)} -> {proc.returncode}\n{proc.stdout}\n{proc.stderr}"
        return proc

    def start(self, *args: str, log: Path, capture: bool = False) -> subprocess.Popen[str]:
        """Start in the background; stderr (and stdout unless captured) to ``log``."""
        with log.open("w") as out:
            return subprocess.Popen(
                [str(self.exe), *args], env=self.env, cwd=self.logs, stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE if capture else out, stderr=out, text=True,
            )

    def has_command(self, *words: str) -> bool:
        return self.run(*words, "--help", check=False).returncode == 0


def wait_for(what: str, probe: Any, timeout: float, proc: subprocess.Popen[str] | None = None, log: Path | None = None) -> Any:
    """Poll ``probe()`` until it returns something truthy."""
    deadline = time.monotonic() + timeout
    while True:
        value = probe()
        if value:
            return value
        if proc is not None and proc.poll() is not None:
            raise AssertionError(f"exited ({proc.returncode}) while waiting for {what}:\n{log.read_text() if log else ''}")
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}:\n{log.read_text() if log else ''}")
        time.sleep(0.05)


def runtime_info(state_dir: Path) -> dict[str, Any] | None:
    try:
        return json.loads((state_dir / "askd.json").read_text())
    except (FileNotFoundError, ValueError):
        return None


def parent_pid(pid: int) -> int:
    stat = Path(f"/proc/{pid}/stat").read_text()
    return int(stat.rsplit(")", 1)[1].split()[1])


def check_version(askd: Installed) -> None:
    out = askd.run("--version").stdout.strip()
    assert out == f"askd {project_version()}"


def static_files() -> dict[str, bytes]:
    """askd/web/static as it is now: taken before a build, so that an edit
    made while the build runs does not look like a packaging fault."""
    return {p.relative_to(STATIC).as_posix(): p.read_bytes() for p in sorted(STATIC.rglob("*")) if p.is_file()}


def check_web_page(public: str, static: dict[str, bytes]) -> None:
    """Every file of the web page is served, byte for byte, and its service worker."""
    assert "index.html" in static
    with httpx.Client(base_url=public, timeout=10) as http:
        page = http.get("/")
        assert page.status_code == 200
        assert page.content == static["index.html"]
        for rel, content in static.items():
            r = http.get(f"/static/{rel}")
            assert r.status_code == 200, rel
            assert r.content == content, rel
        # The service worker is made from a file outside static/: shipped too.
        worker = http.get("/sw.js")
        assert worker.status_code == 200 and b"askd-shell-" in worker.content


SESSION, USER, QUESTION = "pkg-session", "pkg-user", "Ship it?"


class AskAnswer:
    """One question asked and answered through the installed CLI, or through
    the HTTP APIs where the CLI lacks the command."""

    def __init__(self, askd: Installed, public: str, admin: str) -> None:
        self.askd, self.public, self.admin = askd, public, admin
        self.cli_ask = askd.has_command("ask")
        self.cli_answer = askd.has_command("pending", "list") and askd.has_command("pending", "answer")
        self.agent = {"Authorization": "Bearer " + askd.run("token", "issue", "--role", "agent").stdout.strip()}
        self.admin_auth = {"Authorization": "Bearer " + askd.run("token", "issue", "--role", "admin").stdout.strip()}
        self.ask_log = askd.logs / "ask.log"

    def how(self) -> str:
        return f"asked via {'CLI' if self.cli_ask else 'HTTP'}, answered via {'CLI' if self.cli_answer else 'HTTP'}"

    def pending(self) -> list[dict[str, Any]]:
        if self.cli_answer:
            listed = json.loads(self.askd.run("pending", "list", "--session", SESSION, "--json").stdout)
        else:
            r = httpx.get(f"{self.admin}/admin/v1/pending", params={"sessionId": SESSION}, headers=self.admin_auth)
            assert r.status_code == 200, r.text
            listed = r.json()
        return listed["pending"] if isinstance(listed, dict) else listed

    def answer(self, request_id: str) -> None:
        if self.cli_answer:
            self.askd.run("pending", "answer", SESSION, request_id, "--answer", f"{QUESTION}=yes")
            return
        r = httpx.post(
            f"{self.admin}/admin/v1/sessions/{SESSION}/questions/{request_id}/answer",
            json={"answers": {QUESTION: "yes"}},
            headers=self.admin_auth,
        )
        assert r.status_code == 200, r.text

    def run(self) -> str:
        if not self.cli_ask:
            return self._over_http()
        asker = self.askd.start(
            "ask", "--user", USER, "--session", SESSION, "--question", QUESTION, "--option", "yes", "--option", "no", "--json",
            log=self.ask_log, capture=True,
        )
        try:
            request_id = self._answer_pending(asker)
            out, _ = asker.communicate(timeout=CMD_TIMEOUT)
            assert asker.returncode == 0, self.ask_log.read_text()
            self._check_result(json.loads(out), request_id)
        finally:
            if asker.poll() is None:
                asker.kill()
                asker.wait()
        return self.how()

    def _over_http(self) -> str:
        r = httpx.post(
            f"{self.public}/v1/sessions/{SESSION}/questions",
            json={"userId": USER, "questions": [{"question": QUESTION, "options": [{"label": "yes"}, {"label": "no"}]}]},
            headers=self.agent,
        )
        assert r.status_code == 201, r.text
        request_id = self._answer_pending(None)
        assert request_id == r.json()["requestId"]
        result = httpx.get(
            f"{self.public}/v1/sessions/{SESSION}/questions/{request_id}", params={"wait": 10}, headers=self.agent, timeout=20
        ).json()
        self._check_result(result, request_id)
        return self.how()

    def _answer_pending(self, asker: subprocess.Popen[str] | None) -> str:
        found = wait_for("the question to be pending", self.pending, START_TIMEOUT, asker, self.ask_log)
        assert len(found) == 1, found
        assert found[0]["userId"] == USER and found[0]["questions"][0]["question"] == QUESTION
        request_id: str = found[0]["requestId"]
        self.answer(request_id)
        return request_id

    @staticmethod
    def _check_result(result: dict[str, Any], request_id: str) -> None:
        assert result["requestId"] == request_id
        assert result["status"] == "answered"
        assert result["answers"] == {QUESTION: "yes"}


def round_trip(askd: Installed, static: dict[str, bytes], *serve_args: str) -> str:
    """The whole check; ``static`` is the web page's files the build took.
    Returns how the question was asked and answered."""
    check_version(askd)
    log = askd.logs / "serve.log"
    daemon = askd.start("serve", "--port", "0", "--admin-port", "0", *serve_args, log=log)
    try:
        info = wait_for("askd.json", lambda: runtime_info(askd.state_dir), START_TIMEOUT, daemon, log)
        # The one-file binary's Python runs in a child of the process we started.
        assert daemon.pid in (info["pid"], parent_pid(info["pid"]))
        public, admin = f"http://127.0.0.1:{info['port']}", f"http://127.0.0.1:{info['admin_port']}"
        assert httpx.get(f"{admin}/healthz").json()["version"] == project_version()
        check_web_page(public, static)
        how = AskAnswer(askd, public, admin).run()
        daemon.send_signal(signal.SIGTERM)
        assert daemon.wait(timeout=CMD_TIMEOUT) == 0, log.read_text()
        assert runtime_info(askd.state_dir) is None  # removed on a clean stop
        return how
    finally:
        if daemon.poll() is None:
            daemon.kill()
            daemon.wait()
