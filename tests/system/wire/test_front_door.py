"""The front door holds before any token is checked (spec M): a request
without a good token is refused when its headers arrive, bodies are capped
and timed, connections are capped, and only this daemon's host names are
served. Raw sockets, so that what the daemon reads (and when it answers)
is visible."""

from __future__ import annotations

import asyncio
import io
import json
import time
from pathlib import Path

import httpx
import pytest
import websockets

from tests.support.askd_process import Service
from tests.conftest import SECRET, RunningDaemon

BIG = 1024 * 1024


async def open_raw(port: int) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    return await asyncio.open_connection("127.0.0.1", port)


def post_head(port: int, path: str, length: int, token: str | None = None, host: str | None = None) -> bytes:
    auth = f"Authorization: Bearer {token}\r\n" if token else ""
    return (
        f"POST {path} HTTP/1.1\r\nHost: {host or f'127.0.0.1:{port}'}\r\n{auth}"
        f"Content-Type: application/json\r\nContent-Length: {length}\r\n\r\n"
    ).encode()


async def response_then_eof(reader: asyncio.StreamReader, timeout: float = 5.0) -> tuple[int, bytes]:
    """The status and body of the one response, then the connection's end."""
    data = await asyncio.wait_for(reader.read(), timeout)  # read() returns at EOF
    head, _, body = data.partition(b"\r\n\r\n")
    return int(head.split(b" ", 2)[1]), body


async def closed_within(reader: asyncio.StreamReader, timeout: float) -> float:
    """Seconds until the daemon ends the connection (EOF or reset)."""
    start = time.monotonic()
    try:
        while await asyncio.wait_for(reader.read(65536), timeout):
            pass
    except ConnectionError:  # a reset, or our own write into the closed socket
        pass
    return time.monotonic() - start


async def test_a_request_without_a_token_is_refused_at_its_headers(daemon: RunningDaemon) -> None:
    port = daemon.daemon.port
    for token in (None, "not.a.token"):
        reader, writer = await open_raw(port)
        # The headers promise a megabyte; none of it is ever sent.
        writer.write(post_head(port, "/v1/sessions/s/questions", BIG, token))
        status, body = await response_then_eof(reader)
        assert status == 401 and json.loads(body)["error"]["code"] == "unauthorized"
        writer.close()
    # The admin listener too.
    reader, writer = await open_raw(daemon.daemon.admin_port)
    writer.write(post_head(daemon.daemon.admin_port, "/admin/v1/disconnect", BIG))
    assert (await response_then_eof(reader))[0] == 401
    writer.close()


async def test_a_refused_request_whose_body_was_sent_still_gets_its_answer(daemon: RunningDaemon) -> None:
    """Closing a socket with unread input resets the connection, which can
    destroy the answer: askd ends its side and drains what is in flight."""
    port, body = daemon.daemon.port, b'{"pad": "' + b"x" * 300_000 + b'"}'  # more than Tornado reads ahead
    for token in (None, "bad.token.here") * 10:
        reader, writer = await open_raw(port)
        writer.write(post_head(port, "/v1/sessions/s/questions", len(body), token) + body)
        status, answer = await response_then_eof(reader)
        assert status == 401 and json.loads(answer)["error"]["code"] == "unauthorized"
        writer.close()
    # An HTTP client keeping connections alive is told this one ends.
    async with httpx.AsyncClient() as client:
        for _ in range(5):
            r = await client.post(f"{daemon.url}/v1/sessions/s/questions", content=body)
            assert r.status_code == 401 and r.headers["connection"] == "close"


async def test_a_body_over_the_cap_is_refused_unread(daemon: RunningDaemon) -> None:
    port, limit = daemon.daemon.port, daemon.daemon.settings.limits.max_request_bytes
    reader, writer = await open_raw(port)
    writer.write(post_head(port, "/v1/sessions/s/questions", limit + 1, daemon.token("agent")))
    status, body = await response_then_eof(reader)
    assert status == 413 and json.loads(body)["error"]["code"] == "too_large"
    writer.close()
    # A chunked body has no length to refuse up front: it is cut off at the cap.
    reader, writer = await open_raw(port)
    writer.write(
        f"POST /v1/sessions/s/questions HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {daemon.token('agent')}\r\n"
        "Transfer-Encoding: chunked\r\n\r\n".encode()
    )
    chunk = b"x" * 16384
    try:
        for _ in range(limit // len(chunk) + 2):
            writer.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
            await writer.drain()
    except ConnectionError:
        pass
    assert await closed_within(reader, 5) < 5
    writer.close()


@pytest.mark.parametrize("chunk", [16384, 1 << 30], ids=["small-chunks", "one-huge-chunk"])
@pytest.mark.parametrize("listener", ["public", "admin"])
async def test_a_chunked_body_over_the_cap_gets_askds_413(daemon: RunningDaemon, chunk: int, listener: str) -> None:
    """As a declared length over the cap does (issue 29, item 6): askd's
    JSON 413, then the connection ends; never Tornado's bare 400."""
    port = daemon.daemon.port if listener == "public" else daemon.daemon.admin_port
    path = "/v1/sessions/s/questions" if listener == "public" else "/admin/v1/disconnect"
    token = daemon.token("agent" if listener == "public" else "admin")
    limit = daemon.daemon.settings.limits.max_request_bytes
    reader, writer = await open_raw(port)
    writer.write(
        f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {token}\r\n"
        "Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n".encode()
    )
    sent, piece = 0, b"x" * 16384
    try:
        if chunk == 16384:
            while sent <= limit:
                writer.write(b"%x\r\n%s\r\n" % (len(piece), piece))
                sent += len(piece)
        else:  # one chunk declared far over the cap, its start sent
            writer.write(b"%x\r\n" % chunk + piece * (limit // len(piece) + 2))
        await writer.drain()
    except ConnectionError:
        pass
    status, body = await response_then_eof(reader)
    writer.close()
    assert status == 413, body
    assert json.loads(body)["error"] == {"code": "too_large", "message": f"request body is over {limit} bytes"}


async def test_a_chunked_body_within_the_cap_is_read_whole(daemon: RunningDaemon) -> None:
    port = daemon.daemon.port
    body = json.dumps({"userId": "alice", "questions": [{"question": "Which database?"}]}).encode()
    reader, writer = await open_raw(port)
    writer.write(
        f"POST /v1/sessions/s-chunked/questions HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {daemon.token('agent')}\r\n"
        "Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n".encode()
        + b"".join(b"%x\r\n%s\r\n" % (len(part), part) for part in (body[:10], body[10:]))
        + b"0\r\n\r\n"
    )
    head = await asyncio.wait_for(reader.readuntil(b"\r\n"), 5)
    writer.close()
    assert head.split(b" ", 2)[1] == b"201"


@pytest.mark.parametrize("settings_overrides", [{"limits": {"body_timeout_seconds": 0.6}}])
async def test_a_trickled_body_ends_at_the_body_timeout(daemon: RunningDaemon) -> None:
    port = daemon.daemon.port
    reader, writer = await open_raw(port)
    writer.write(post_head(port, "/v1/sessions/s/questions", 1000, daemon.token("agent")))
    start = time.monotonic()

    async def trickle() -> None:  # a byte every 0.1 s: each one would reset an idle timer
        try:
            for _ in range(50):
                writer.write(b" ")
                await writer.drain()
                await asyncio.sleep(0.1)
        except ConnectionError:
            pass

    trickling = asyncio.create_task(trickle())
    await closed_within(reader, 10)
    took = time.monotonic() - start
    trickling.cancel()
    writer.close()
    assert 0.5 < took < 3, took


async def test_a_body_sent_after_its_headers_is_read_whole(daemon: RunningDaemon) -> None:
    # Most bodies come with their headers (askd then needs no body timer);
    # one that follows them, in two parts, is waited for and read whole.
    port = daemon.daemon.port
    body = json.dumps({"userId": "alice", "questions": [{"question": "Which database?"}]}).encode()
    reader, writer = await open_raw(port)
    writer.write(post_head(port, "/v1/sessions/s-late/questions", len(body), daemon.token("agent")))
    await writer.drain()
    await asyncio.sleep(0.2)
    writer.write(body[:10])
    await writer.drain()
    await asyncio.sleep(0.2)
    writer.write(body[10:])
    head = await asyncio.wait_for(reader.readuntil(b"\r\n"), 5)
    assert head.split(b" ", 2)[1] == b"201"
    writer.close()
    pending = (await daemon.admin("GET", "/admin/v1/pending", params={"userId": "alice"})).json()["pending"]
    assert [p["sessionId"] for p in pending] == ["s-late"]


@pytest.mark.parametrize("settings_overrides", [{"limits": {"idle_timeout_seconds": 0.5}}])
async def test_an_idle_connection_is_closed(daemon: RunningDaemon) -> None:
    reader, writer = await open_raw(daemon.daemon.port)
    writer.write(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n")  # headers never finished
    assert await closed_within(reader, 10) < 3
    writer.close()


async def open_proven(daemon: RunningDaemon, port: int) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """A keep-alive connection whose request carried a valid token (as an
    agent's pooled one): it holds its place in the pool."""
    reader, writer = await open_raw(port)
    role, path = ("agent", "/v1/sessions/s/questions") if port == daemon.daemon.port else ("admin", "/admin/v1/stats")
    writer.write(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {daemon.token(role)}\r\n\r\n".encode())
    head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 5)
    assert head.startswith(b"HTTP/1.1 200"), head
    length = next(line for line in head.split(b"\r\n") if line.lower().startswith(b"content-length:"))
    await reader.readexactly(int(length.split(b":")[1]))
    return reader, writer


@pytest.mark.parametrize("settings_overrides", [{"limits": {"max_connections": 3, "max_admin_connections": 2}}])
async def test_connections_over_the_cap_are_closed_at_once_and_logged_once(daemon: RunningDaemon, log_text: io.StringIO) -> None:
    # Each listener is a pool of its own (issue 29, item 3: the admin API is
    # never crowded out), held here by connections that carried a token.
    held = [await open_proven(daemon, daemon.daemon.port) for _ in range(3)]
    admin = [await open_proven(daemon, daemon.daemon.admin_port) for _ in range(2)]
    for port in (daemon.daemon.port, daemon.daemon.port, daemon.daemon.port):
        reader, writer = await open_raw(port)
        assert await closed_within(reader, 5) < 1
        writer.close()
    refusals = [line for line in log_text.getvalue().splitlines() if "http.connection_refused" in line]
    assert len(refusals) == 1 and '"setting":"limits.max_connections"' in refusals[0]
    reader, writer = await open_raw(daemon.daemon.admin_port)
    assert await closed_within(reader, 5) < 1
    writer.close()
    # A closed one frees its place.
    held[0][1].close()
    await held[0][1].wait_closed()
    await asyncio.sleep(0.1)  # the daemon sees the close
    async with httpx.AsyncClient() as fresh:
        r = await fresh.get(f"{daemon.url}/healthz")
    assert r.status_code == 200
    for _, writer in held[1:] + admin:
        writer.close()


@pytest.mark.parametrize("settings_overrides", [{"limits": {"max_connections_per_address": 2}}])
async def test_connections_per_address_are_capped(daemon: RunningDaemon) -> None:
    user = await daemon.connect("alice")  # a WebSocket counts for as long as it is open
    reader1, writer1 = await open_raw(daemon.daemon.port)
    reader, writer = await open_raw(daemon.daemon.port)
    assert await closed_within(reader, 5) < 1
    writer.close()
    # The admin listener counts its own (issue 29, item 3).
    reader, writer = await open_raw(daemon.daemon.admin_port)
    writer.write(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
    assert (await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 5)).startswith(b"HTTP/1.1 200")
    writer.close()
    await user.works()
    await user.close()
    await asyncio.sleep(0.1)
    reader, writer = await open_raw(daemon.daemon.port)
    writer.write(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
    assert (await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 5)).startswith(b"HTTP/1.1 200")
    writer.close()
    writer1.close()


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError("no VmRSS")


async def test_a_hundred_trickled_unauthenticated_bodies_cost_nothing(tmp_path: Path) -> None:
    """The issue's measurement: 100 connections without a token, each
    trickling a 1 MiB body. Each is refused at its headers and closed; the
    daemon's memory stays flat."""
    service = Service(tmp_path / "state", env={"ASKD_AUTH__SECRET": SECRET})
    await service.start()
    try:
        pid = service.proc.proc.pid  # type: ignore[union-attr]
        r = httpx.get(f"{service.url}/healthz")  # warmed up
        assert r.status_code == 200
        before = rss_kib(pid)
        conns = [await open_raw(service.port) for _ in range(100)]
        for _, writer in conns:
            writer.write(post_head(service.port, "/v1/sessions/s/questions", BIG))

        async def trickle(writer: asyncio.StreamWriter) -> None:
            try:
                for _ in range(BIG // 16384):
                    writer.write(b"x" * 16384)
                    await writer.drain()
                    await asyncio.sleep(0.01)
            except ConnectionError:
                pass

        # Answered before one byte of the body is sent: nothing is waited for.
        answers = await asyncio.gather(*(asyncio.wait_for(r.readuntil(b"\r\n"), 10) for r, _ in conns))
        assert all(a.startswith(b"HTTP/1.1 401") for a in answers)
        trickles = [asyncio.create_task(trickle(w)) for _, w in conns]
        await asyncio.gather(*(closed_within(r, 10) for r, _ in conns))  # every one closed
        await asyncio.gather(*trickles)  # each write failed or went to a closed socket
        grew = rss_kib(pid) - before
        for _, w in conns:
            w.close()
        # Reading the bodies would hold up to 100 MiB.
        assert grew < 10 * 1024, f"RSS grew {grew} KiB"
    finally:
        await service.close()


@pytest.mark.parametrize(
    "settings_overrides", [{"allowed_hosts": ["askd.internal"], "public_url": "https://tools.example.com/askd/"}]
)
async def test_only_this_daemons_host_names_are_served(daemon: RunningDaemon) -> None:
    """A DNS-rebinding page reaches 127.0.0.1 under its own name: refused."""
    for path in ("/", "/healthz", "/v1/sessions/s/questions/r"):
        r = await daemon.http.get(f"{daemon.url}{path}", headers={"Host": "attacker.example:80", **daemon.agent_headers})
        assert r.status_code == 403 and r.json()["error"]["code"] == "forbidden", path
    reader, writer = await open_raw(daemon.daemon.port)
    writer.write(
        "GET /ws HTTP/1.1\r\nHost: attacker.example\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
        f"Authorization: Bearer {daemon.token('user', 'al')}\r\n\r\n".encode()
    )
    assert (await asyncio.wait_for(reader.readuntil(b"\r\n"), 5)).startswith(b"HTTP/1.1 403")
    writer.close()
    r = await daemon.http.get(f"{daemon.admin_url}/healthz", headers={"Host": "attacker.example"})
    assert r.status_code == 403
    # The port is not compared; the listen address, localhost, [::1],
    # public_url's host and allowed_hosts are served.
    for host in ("127.0.0.1:1", "localhost", "LOCALHOST:8765", "[::1]:9", "tools.example.com", "askd.internal:443"):
        r = await daemon.http.get(f"{daemon.url}/healthz", headers={"Host": host})
        assert r.status_code == 200, host


async def test_origin_compares_the_scheme_too(daemon: RunningDaemon) -> None:
    token = {"Authorization": f"Bearer {daemon.token('user', 'al')}"}
    port = daemon.daemon.port
    ok = await websockets.connect(daemon.ws_url, additional_headers=token, origin=f"http://127.0.0.1:{port}")  # type: ignore[arg-type]
    await ok.close()
    for origin in (f"https://127.0.0.1:{port}", "http://127.0.0.1", f"http://127.0.0.1:{port + 1}"):
        with pytest.raises(websockets.InvalidStatus) as refused:
            await websockets.connect(daemon.ws_url, additional_headers=token, origin=origin)  # type: ignore[arg-type]
        assert refused.value.response.status_code == 403, origin


async def test_no_response_names_the_server_software(daemon: RunningDaemon) -> None:
    for url in (f"{daemon.url}/", f"{daemon.url}/static/app.js", f"{daemon.url}/healthz", f"{daemon.url}/nope", f"{daemon.admin_url}/metrics"):
        r = await daemon.http.get(url)
        assert "server" not in r.headers, url
    async with websockets.connect(daemon.ws_url, additional_headers={"Authorization": f"Bearer {daemon.token('user', 'al')}"}) as ws:
        assert "Server" not in ws.response.headers
