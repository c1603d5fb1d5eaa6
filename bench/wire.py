"""Lean loopback clients for the load generator: a WebSocket client and an
HTTP/1.1 keep-alive client, each a bare ``asyncio.Protocol``.

The load process must cost less than the server it measures, so these do
only what the benchmark needs: no extensions, no fragmentation, no
validation of the handshake key. Client frames use an all-zero mask key
(valid per RFC 6455 5.3, and the payload then needs no XOR).
"""

from __future__ import annotations

import asyncio
import struct
from collections import deque
from collections.abc import Callable

HOST = "127.0.0.1"
_WS_KEY = "dGhlIHNhbXBsZSBub25jZQ=="  # the RFC's sample key; the server only hashes it
_MASK = b"\x00\x00\x00\x00"


class Closed(Exception):
    """The connection went away."""


class WsClient(asyncio.Protocol):
    """One WebSocket connection. Incoming text frames go to ``on_frame`` when
    it is set, else to a queue read with :meth:`recv`."""

    def __init__(self, port: int, token: str, on_frame: Callable[[WsClient, bytes], None] | None = None) -> None:
        self._request = (
            f"GET /ws HTTP/1.1\r\nHost: {HOST}:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            f"Sec-WebSocket-Key: {_WS_KEY}\r\nSec-WebSocket-Version: 13\r\n"
            f"Authorization: Bearer {token}\r\n\r\n"
        ).encode()
        self.on_frame = on_frame
        self.transport: asyncio.Transport | None = None
        self.opened: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.closed: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._buf = bytearray()
        self._upgraded = False
        self._frames: deque[bytes] = deque()
        self._waiter: asyncio.Future[None] | None = None

    # ---- asyncio.Protocol ---------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]
        self.transport.write(self._request)  # type: ignore[union-attr]

    def data_received(self, data: bytes) -> None:
        buf = self._buf
        buf += data
        if not self._upgraded:
            end = buf.find(b"\r\n\r\n")
            if end < 0:
                return
            status = bytes(buf[9:12])
            del buf[: end + 4]
            if status != b"101":
                self._fail(Closed(f"upgrade refused: HTTP {status.decode()}"))
                return
            self._upgraded = True
            if not self.opened.done():
                self.opened.set_result(None)
        pos, n = 0, len(buf)
        while n - pos >= 2:
            opcode, length = buf[pos] & 0x0F, buf[pos + 1] & 0x7F
            head = 2
            if length == 126:
                if n - pos < 4:
                    break
                length, head = struct.unpack_from("!H", buf, pos + 2)[0], 4
            elif length == 127:
                if n - pos < 10:
                    break
                length, head = struct.unpack_from("!Q", buf, pos + 2)[0], 10
            if n - pos < head + length:
                break
            payload = bytes(buf[pos + head : pos + head + length])
            pos += head + length
            if opcode == 1:
                if self.on_frame is not None:
                    self.on_frame(self, payload)
                else:
                    self._frames.append(payload)
                    if self._waiter is not None and not self._waiter.done():
                        self._waiter.set_result(None)
            elif opcode == 9:  # ping: answer so the server keeps us
                self._write(0x8A, payload)
            elif opcode == 8:
                self.transport.close()  # type: ignore[union-attr]
        if pos:
            del buf[:pos]

    def connection_lost(self, exc: Exception | None) -> None:
        self._fail(Closed("connection lost"))
        if not self.closed.done():
            self.closed.set_result(None)

    def _fail(self, err: Exception) -> None:
        if not self.opened.done():
            self.opened.set_exception(err)
            self.opened.exception()  # mark retrieved: callers may not wait on it
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_exception(err)
        if self.transport is not None and not self._upgraded:
            self.transport.close()

    # ---- use ----------------------------------------------------------

    def _write(self, first: int, payload: bytes) -> None:
        n = len(payload)
        if n < 126:
            head = bytes((first, 0x80 | n))
        elif n < 65536:
            head = bytes((first, 0xFE)) + struct.pack("!H", n)
        else:
            head = bytes((first, 0xFF)) + struct.pack("!Q", n)
        self.transport.write(head + _MASK + payload)  # type: ignore[union-attr]

    def send(self, text: bytes) -> None:
        if self.transport is not None and not self.transport.is_closing():
            self._write(0x81, text)

    async def recv(self) -> bytes:
        while not self._frames:
            if self.closed.done():
                raise Closed("connection lost")
            self._waiter = asyncio.get_running_loop().create_future()
            await self._waiter
        return self._frames.popleft()

    def abort(self) -> None:
        if self.transport is not None:
            self.transport.abort()


async def ws_connect(port: int, token: str, on_frame: Callable[[WsClient, bytes], None] | None = None) -> WsClient:
    loop = asyncio.get_running_loop()
    _, client = await loop.create_connection(lambda: WsClient(port, token, on_frame), HOST, port)
    await client.opened
    return client


class HttpClient(asyncio.Protocol):
    """HTTP/1.1 with keep-alive, one request at a time. Responses must carry
    Content-Length (Tornado's ``finish()`` always sets it)."""

    def __init__(self, port: int) -> None:
        self.host = f"{HOST}:{port}".encode()
        self.transport: asyncio.Transport | None = None
        self._buf = bytearray()
        self._reply: asyncio.Future[tuple[int, bytes]] | None = None
        self._need = -1  # body bytes expected once the head is read

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        buf = self._buf
        buf += data
        if self._need < 0:
            end = buf.find(b"\r\n\r\n")
            if end < 0:
                return
            head = bytes(buf[:end]).lower()
            self._status = int(head[9:12])
            at = head.find(b"content-length:")
            if at >= 0:
                stop = head.find(b"\r\n", at)
                self._need = int(head[at + 15 : stop if stop >= 0 else len(head)])
            else:
                self._need = 0
            del buf[: end + 4]
        if len(buf) >= self._need:
            body = bytes(buf[: self._need])
            del buf[: self._need]
            self._need = -1
            reply, self._reply = self._reply, None
            if reply is not None and not reply.done():
                reply.set_result((self._status, body))

    def connection_lost(self, exc: Exception | None) -> None:
        if self._reply is not None and not self._reply.done():
            self._reply.set_exception(Closed("connection lost"))

    def request(self, method: str, path: str, headers: bytes = b"", body: bytes = b"") -> asyncio.Future[tuple[int, bytes]]:
        """Send a request; ``headers`` are ready-made ``Name: value\\r\\n`` lines."""
        assert self._reply is None, "one request at a time"
        self._reply = asyncio.get_running_loop().create_future()
        self.transport.write(  # type: ignore[union-attr]
            b"%s %s HTTP/1.1\r\nHost: %s\r\n%sContent-Length: %d\r\n\r\n%s"
            % (method.encode(), path.encode(), self.host, headers, len(body), body)
        )
        return self._reply

    def close(self) -> None:
        if self.transport is not None:
            self.transport.close()


async def http_connect(port: int) -> HttpClient:
    loop = asyncio.get_running_loop()
    _, client = await loop.create_connection(lambda: HttpClient(port), HOST, port)
    return client
