"""The server under test as a real process: askd (``askd serve``, on the
store it is given) or the floor (``python -m bench.floor``), started with
raised limits, found through its ``listening`` log line, measured through
``/proc`` and stopped."""

from __future__ import annotations

import json
import os
import resource
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from askd import tokens

SECRET = "bench-secret-0123456789abcdef-0123456789abcdef"
CLK_TCK = os.sysconf("SC_CLK_TCK")
START_TIMEOUT = 30.0
START_POLL = 0.005  # B5 times the start: poll finely for askd.json

#: askd's stores (the ``store`` setting): the default first.
STORES = ("sqlite", "memory")

# askd's limits, raised so that no cap (not the one under test) stops a run.
ASKD_ENV = {
    "ASKD_AUTH__SECRET": SECRET,
    "ASKD_LOG__FORMAT": "json",
    "ASKD_LIMITS__MAX_PENDING_TOTAL": "10000000",
    "ASKD_LIMITS__MAX_PENDING_PER_SESSION": "100000",
    "ASKD_LIMITS__MAX_PENDING_PER_AGENT": "10000000",
    "ASKD_LIMITS__MAX_PENDING_BYTES_PER_AGENT": str(64 << 30),
    "ASKD_LIMITS__MAX_USER_SHARE_PER_AGENT": "1",
    "ASKD_LIMITS__MAX_PENDING_BYTES_TOTAL": str(64 << 30),
    "ASKD_LIMITS__MAX_CONNECTIONS_PER_USER": "100000",
    "ASKD_LIMITS__MAX_CONNECTIONS_PER_ADDRESS": "0",  # every tab comes from 127.0.0.1
    "ASKD_LIMITS__FRAMES_PER_SECOND": "1000000",
    "ASKD_LIMITS__FRAMES_BURST": "1000000",
    "ASKD_WS__PING_INTERVAL_SECONDS": "3600",
    "ASKD_WS__PING_TIMEOUT_SECONDS": "3600",
}


def raise_nofile(want: int = 1 << 20) -> int:
    """Raise this process's open-files limit (children inherit it)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    new = min(want, hard) if hard != resource.RLIM_INFINITY else want
    if new > soft:
        resource.setrlimit(resource.RLIMIT_NOFILE, (new, hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of a process, from /proc/PID/stat."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLK_TCK  # utime, stime


def rss_bytes(pid: int) -> int:
    """Resident set size, from VmRSS in /proc/PID/status."""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise RuntimeError(f"no VmRSS for {pid}")


class Server:
    """A started server. ``kind`` is ``askd`` or ``floor``; askd runs on
    ``store`` (``sqlite``, its default, or ``memory``), in ``state_dir`` when
    given (B5 starts it on a filled store), else in a fresh temporary one."""

    def __init__(
        self,
        kind: str,
        *,
        store: str = "sqlite",
        state_dir: Path | None = None,
        log_level: str = "info",
        uvloop: bool = False,
        extra_env: dict[str, str] | None = None,
        bare: bool = False,
    ) -> None:
        self.kind = kind
        self.store = store if kind == "askd" else None
        self.dir = Path(tempfile.mkdtemp(prefix=f"bench-{kind}-"))
        self.state_dir = state_dir or self.dir / "state"
        self.log_path = self.dir / "server.log"
        env = {**os.environ, **(extra_env or {})}
        for key in [k for k in env if k.startswith("ASKD_") and k not in (extra_env or {})]:
            del env[key]
        if kind == "askd":
            env.update(ASKD_ENV)
            env["ASKD_STATE_DIR"] = str(self.state_dir)
            env["ASKD_STORE"] = store
            (self.state_dir / "askd.json").unlink(missing_ok=True)  # a killed daemon's, not this one's
            env["ASKD_LOG__LEVEL"] = log_level
            env.update(extra_env or {})
            # bench.serve runs `askd serve`, on uvloop when asked.
            cmd = [
                sys.executable, "-m", "bench.serve", *(["--uvloop"] if uvloop else []), *(["--bare"] if bare else []),
                "serve", "--port", "0", "--admin-port", "0",
            ]
        elif kind == "floor":
            cmd = [sys.executable, "-m", "bench.floor", *(["--uvloop"] if uvloop else []), "--port", "0", "--admin-port", "0"]
        else:
            raise ValueError(kind)
        raise_nofile()
        self._log = open(self.log_path, "wb")
        self.started_at = time.perf_counter()
        self.proc = subprocess.Popen(cmd, env=env, stdout=self._log, stderr=subprocess.STDOUT, cwd=Path(__file__).parent.parent)
        self.pid = self.proc.pid
        self.port, self.admin_port = self._wait_listening()
        self.listening_s = time.perf_counter() - self.started_at  # process start to askd.json (or the log line)
        self._tokens: dict[str, str] = {}
        self.agent_auth = b"Authorization: Bearer %s\r\nContent-Type: application/json\r\n" % self._token("agent").encode()
        self.admin_auth = b"Authorization: Bearer %s\r\nContent-Type: application/json\r\n" % self._token("admin").encode()

    def _wait_listening(self) -> tuple[int, int]:
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"{self.kind} exited with {self.proc.returncode}: {self.log_path.read_text()[-2000:]}")
            info: dict[str, Any] | None = None
            runtime = self.state_dir / "askd.json"  # askd writes it at any log level
            if runtime.exists():
                info = json.loads(runtime.read_text() or "null")
            else:
                for line in self.log_path.read_text().splitlines():
                    if '"listening"' in line:
                        info = json.loads(line)
            if info:
                return int(info["port"]), int(info["admin_port"])
            time.sleep(START_POLL)
        raise RuntimeError(f"{self.kind} did not log `listening` within {START_TIMEOUT}s")

    # Where pair (or user) k's agent asks and where its tab connects: one
    # server for both here; bench.cluster.Cluster puts them on different nodes.
    def agent_port(self, k: int) -> int:
        return self.port

    def tab_port(self, k: int) -> int:
        return self.port

    def _token(self, role: str, sub: str | None = None) -> str:
        return tokens.issue(SECRET, role, sub)  # type: ignore[arg-type]

    def user_token(self, user: str) -> str:
        tok = self._tokens.get(user)
        if tok is None:
            tok = self._tokens[user] = self._token("user", user)
        return tok

    def cpu(self) -> float:
        return cpu_seconds(self.pid)

    # A scenario brackets its measured phase with begin()/end(): CPU seconds
    # in between and, with ``profile_dir`` set, a py-spy profile of it.
    profile_dir: Path | None = None
    _spy: subprocess.Popen[bytes] | None = None

    def begin(self, phase: str) -> float:
        if self.profile_dir is not None and self.kind == "askd":
            self.profile_dir.mkdir(parents=True, exist_ok=True)
            out = self.profile_dir / f"{phase}-{self.store}.txt"
            spy = Path(sys.executable).parent / "py-spy"
            self._spy = subprocess.Popen(
                [str(spy), "record", "-p", str(self.pid), "-o", str(out), "--format", "raw", "-r", "250", "--nonblocking"],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            time.sleep(1.0)  # py-spy attaches
        return self.cpu()

    def end(self, cpu0: float) -> float:
        cpu = self.cpu() - cpu0
        if self._spy is not None:
            self._spy.send_signal(signal.SIGINT)
            self._spy.wait(30)
            self._spy = None
        return cpu

    def rss(self) -> int:
        return rss_bytes(self.pid)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._log.close()

    def __enter__(self) -> Server:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop()
