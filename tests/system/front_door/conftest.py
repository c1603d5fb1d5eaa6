"""The front door for real: Debian's nginx in front of the in-process
daemon under ``/askd/``, and TLS certificates made by the test.

The nginx configuration is the one ``docs/deploy.md`` shows: its ``map``,
``upstream`` and ``location /askd/`` blocks are read from the file, with
the upstream pointed at the test's daemon, inside a server on a free port
of a temporary directory (``nginx -p DIR -c FILE -g 'daemon off;'``). So
the documented configuration is the tested one.

Neither nginx, Caddy (``caddy.py``) nor openssl is ever downloaded:
without them these tests skip, except under ``CI=true`` where that is a
failure (``.ci/run`` installs them).
"""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import socket
import subprocess
import textwrap
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import websockets

from askd.client import AsyncAgentClient
from tests.conftest import RunningDaemon, WsClient, eventually, q

NGINX = Path(shutil.which("nginx") or "/usr/sbin/nginx")
OPENSSL = Path(shutil.which("openssl") or "/usr/bin/openssl")
DEPLOY_DOC = Path(__file__).resolve().parents[3] / "docs" / "deploy.md"
PREFIX = "/askd"
START_TIMEOUT = 10.0


def need(tool: Path, package: str) -> None:
    if tool.exists():
        return
    reason = f"no {tool} (apt-get install {package}); the front-door tests need it"
    if os.environ.get("CI") == "true":
        pytest.fail(reason)
    pytest.skip(reason)


def documented_blocks() -> dict[str, str]:
    """The ``map``, ``log_format``, ``upstream`` and ``location`` blocks of
    docs/deploy.md's nginx example."""
    text = DEPLOY_DOC.read_text()
    example = next(b for b in re.findall(r"```nginx\n(.*?)```", text, re.S) if "location /askd/ {" in b)
    blocks = {}
    for name, start in (("map", "map $http_upgrade"), ("upstream", "upstream askd {"), ("location", "location /askd/ {")):
        found = re.search(rf"^([ \t]*){re.escape(start)}.*?^\1\}}", example, re.S | re.M)
        assert found, f"docs/deploy.md: the nginx example has no `{start}` block"
        blocks[name] = textwrap.dedent(found.group(0))
    found = re.search(r"^log_format askd .*?;$", example, re.S | re.M)
    assert found, "docs/deploy.md: the nginx example has no `log_format askd`"
    blocks["log_format"] = found.group(0)
    assert "server 127.0.0.1:8765;" in blocks["upstream"], "docs/deploy.md: the upstream should name askd's default port"
    return blocks


CONFIG = """\
{user}
worker_processes 1;
pid {dir}/nginx.pid;
error_log {dir}/error.log warn;
events {{ worker_connections 512; }}
http {{
{log_format}
    access_log {dir}/access.log askd;
    client_body_temp_path {dir}/tmp/body;
    proxy_temp_path {dir}/tmp/proxy;
    fastcgi_temp_path {dir}/tmp/fastcgi;
    uwsgi_temp_path {dir}/tmp/uwsgi;
    scgi_temp_path {dir}/tmp/scgi;
{map}
{upstream}
    server {{
        listen 127.0.0.1:{port};
{location}
    }}
}}
"""


def render(dir_: Path, port: int, upstream_port: int | list[int], bind: str | None) -> str:
    blocks = documented_blocks()
    ports = upstream_port if isinstance(upstream_port, list) else [upstream_port]
    servers = "\n    ".join(f"server 127.0.0.1:{p};" for p in ports)  # round robin over the nodes
    blocks["upstream"] = re.sub(r"server 127\.0\.0\.1:8765;[^\n]*", servers, blocks["upstream"])
    if bind is not None:  # connect to askd from another loopback address
        blocks["location"] = blocks["location"].rstrip()[:-1] + f"    proxy_bind {bind};\n}}"
    return CONFIG.format(
        # The master runs as root here; its workers too, so they can use DIR.
        user="user root;" if os.geteuid() == 0 else "",
        dir=dir_,
        port=port,
        **{k: textwrap.indent(v, " " * (8 if k == "location" else 4)) for k, v in blocks.items()},
    )


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Proxy:
    """One running nginx: ``url`` is askd's base URL through it (``.../askd``)."""

    port: int
    dir: Path
    proc: asyncio.subprocess.Process
    clients: list[WsClient] = field(default_factory=list)

    @property
    def origin(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def url(self) -> str:
        return f"{self.origin}{PREFIX}"

    @property
    def ws_url(self) -> str:
        return f"ws://127.0.0.1:{self.port}{PREFIX}/ws"

    def access_log(self) -> str:
        return (self.dir / "access.log").read_text()

    async def connect(self, token: str, **kw: Any) -> WsClient:
        """A WebSocket through the proxy (``local_addr``, ``origin``, headers...)."""
        headers = {"Authorization": f"Bearer {token}", **kw.pop("additional_headers", {})}
        client = WsClient(await websockets.connect(self.ws_url, additional_headers=headers, **kw))
        self.clients.append(client)
        return client

    async def stop(self) -> None:
        for client in self.clients:
            await client.close()
        if self.proc.returncode is None:
            self.proc.terminate()  # nginx's fast shutdown
            try:
                await asyncio.wait_for(self.proc.wait(), 5)
            except asyncio.TimeoutError:
                self.proc.kill()
                await self.proc.wait()


async def listening(proc: asyncio.subprocess.Process, port: int) -> bool:
    """Whether the proxy ``proc`` accepts connections on ``port`` within
    START_TIMEOUT; if not, it is stopped (its errors say why)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + START_TIMEOUT
    while proc.returncode is None and loop.time() < deadline:
        try:
            _, writer = await asyncio.open_connection("127.0.0.1", port)
        except OSError:
            await asyncio.sleep(0.02)
            continue
        writer.close()
        return True
    if proc.returncode is None:
        proc.kill()
    await proc.wait()
    return False


async def start_nginx(dir_: Path, upstream_port: int | list[int], bind: str | None = None) -> Proxy:
    for _ in range(3):  # another process may take the free port first
        port = free_port()
        where = dir_ / f"nginx-{port}"
        (where / "tmp").mkdir(parents=True)
        conf = where / "nginx.conf"
        conf.write_text(render(where, port, upstream_port, bind))
        proc = await asyncio.create_subprocess_exec(
            str(NGINX), "-p", str(where), "-c", str(conf), "-e", str(where / "error.log"), "-g", "daemon off;",
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        )
        if await listening(proc, port):
            return Proxy(port, where, proc)
        assert proc.stderr is not None
        errors = (await proc.stderr.read()).decode() + (where / "error.log").read_text(errors="replace")
        if "Address already in use" not in errors:
            raise AssertionError(f"nginx did not start:\n{errors}")
    raise AssertionError("nginx found no free port in three tries")


# The tab's own address: the proxy sees it, and so does askd when it trusts the proxy.
TAB = "127.0.0.3"
FORGED = {"X-Forwarded-For": "203.0.113.7", "X-Real-IP": "203.0.113.8", "X-Forwarded-Host": "evil.example"}


async def remotes(daemon: RunningDaemon) -> list[str]:
    """The client addresses askd lists for its connections."""
    r = await daemon.admin("GET", "/admin/v1/connections")
    return [c["remote"] for c in r.json()["connections"]]


StartProxy = Callable[..., Awaitable[Proxy]]


async def survives_a_drop(
    daemon: RunningDaemon,
    proxy: Proxy,
    open_tab: Callable[[], Awaitable[WsClient]],
    long_polls: Callable[[str], int],
) -> None:
    """The product's promise through a proxy: an agent asks through it and
    long-polls; the link between the proxy and askd drops; the tab comes
    back through the proxy, gets the same question and answers it; the agent
    gets that answer. ``long_polls(requestId)`` counts the agent's polls the
    proxy logged (each proxy logs in its own format)."""
    tab = await open_tab()
    assert await tab.subscribe("*") == []
    async with AsyncAgentClient(proxy.url, daemon.token("agent"), poll_seconds=0.3) as agent:
        asking = asyncio.create_task(agent.ask("s1", "alice", [q("Deploy now?", "yes", "no")]))
        first = (await tab.expect("ask_user_questions"))["payload"]

        # The link between the proxy and askd drops, as a network failure would.
        r = await daemon.admin("POST", "/admin/v1/disconnect", json={"userId": "alice", "mode": "abort"})
        assert r.json() == {"disconnected": 1}
        await tab.closed()  # the proxy passes the drop on to the tab
        await eventually(lambda: long_polls(first["requestId"]) >= 2, what="the agent's long-polls through the proxy")
        assert not asking.done()

        tab = await open_tab()
        frames = await tab.subscribe("*")
        assert [f["type"] for f in frames] == ["session_snapshot", "ask_user_questions"]
        assert frames[1]["payload"] == first  # the same requestId, questions and times
        ack = await tab.answer("s1", first["requestId"], {"Deploy now?": "yes"})
        assert ack["payload"] == {"accepted": True}
        await tab.expect("ask_user_questions_cancelled")

        result = await asyncio.wait_for(asking, 5)
    assert result.answered and result.answers == {"Deploy now?": "yes"}
    assert result.request_id == first["requestId"]


@pytest.fixture
async def nginx(daemon: RunningDaemon, tmp_path: Path) -> AsyncIterator[StartProxy]:
    """``await nginx()`` starts nginx in front of the daemon under ``/askd/``;
    ``bind="127.0.0.2"`` makes it connect to askd from that address."""
    need(NGINX, "nginx")
    proxies: list[Proxy] = []

    async def start(bind: str | None = None) -> Proxy:
        proxy = await start_nginx(tmp_path, daemon.daemon.port, bind)
        proxies.append(proxy)
        return proxy

    yield start
    for proxy in proxies:
        await proxy.stop()


@dataclass(frozen=True)
class Certs:
    """A test CA and a server certificate it signed, for 127.0.0.1 and localhost."""

    ca: Path
    cert: Path
    key: Path


def _openssl(*args: str, cwd: Path) -> None:
    subprocess.run([str(OPENSSL), *args], cwd=cwd, check=True, capture_output=True, timeout=30)


@pytest.fixture(scope="session")
def certs(tmp_path_factory: pytest.TempPathFactory) -> Certs:
    need(OPENSSL, "openssl")
    d = tmp_path_factory.mktemp("tls")
    ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
    _openssl("req", "-x509", *ec, "-keyout", "ca.key", "-out", "ca.pem", "-days", "2", "-subj", "/CN=askd test CA", cwd=d)
    _openssl("req", "-new", *ec, "-keyout", "key.pem", "-out", "server.csr", "-subj", "/CN=127.0.0.1", cwd=d)
    (d / "server.ext").write_text(
        "subjectAltName = IP:127.0.0.1, DNS:localhost\n"
        "basicConstraints = CA:FALSE\n"
        "keyUsage = critical, digitalSignature\n"
        "extendedKeyUsage = serverAuth\n"
    )
    _openssl(
        "x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial",
        "-out", "cert.pem", "-days", "2", "-extfile", "server.ext", cwd=d,
    )
    return Certs(ca=d / "ca.pem", cert=d / "cert.pem", key=d / "key.pem")
