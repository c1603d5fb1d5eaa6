"""A real ``redis-server`` for tests: its own port and directory, started
and stopped by the test (no mock, no fake). No persistence, unless
``appendonly``: then every write is in the append-only file before Redis
replies (``appendfsync always``, the default here), so a ``kill()`` and a
``start()`` on the same port and directory bring back everything it
acknowledged. ``bench.cluster`` starts one with ``appendfsync="everysec"``,
the setting docs/scaling.md recommends for production."""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from pathlib import Path

START_TIMEOUT = 10.0


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class RedisServer:
    def __init__(self, directory: Path, port: int | None = None, *, appendonly: bool = False, appendfsync: str = "always") -> None:
        self.dir, self.port, self.appendonly, self.appendfsync = directory, port or free_port(), appendonly, appendfsync
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> RedisServer:
        exe = shutil.which("redis-server")
        if exe is None:
            raise RuntimeError("redis-server is not installed (apt-get install redis-server; .ci/run does it)")
        self.dir.mkdir(parents=True, exist_ok=True)
        persistence = ["--appendonly", "yes", "--appendfsync", self.appendfsync] if self.appendonly else ["--appendonly", "no"]
        self.proc = subprocess.Popen(
            [exe, "--port", str(self.port), "--bind", "127.0.0.1", "--dir", str(self.dir),
             "--save", "", *persistence, "--daemonize", "no", "--logfile", str(self.dir / "redis.log")],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.2) as s:
                    s.sendall(b"PING\r\n")
                    if s.recv(16).startswith(b"+PONG"):
                        return self
            except OSError:
                time.sleep(0.02)
        raise RuntimeError(f"redis-server did not start on {self.port}: {(self.dir / 'redis.log').read_text()[-500:]}")

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc = None

    def kill(self) -> None:
        if self.proc is not None:
            self.proc.kill()
            self.proc.wait()
            self.proc = None


