"""A misbehaving HTTP proxy in front of the daemon's public listener, to
show what the agent client survives: 503s, a link cut in the middle of a
long-poll, and a response lost after the daemon acted on the request."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import tornado.httpserver
import tornado.netutil
import tornado.web

FORWARDED_HEADERS = ("Authorization", "Idempotency-Key", "Content-Type")


class FlakyProxy:
    def __init__(self, upstream: str) -> None:
        self.upstream = upstream
        self.fail_next = 0  # the next N requests get a 503 from the proxy itself
        self.drop_next_wait = 0  # the next N GET long-polls are cut while the daemon waits
        self.lose_next_post = 0  # the next N POSTs reach the daemon but their response is lost
        self.dropped = asyncio.Event()  # set when a long-poll was cut
        self.seen: list[tuple[str, str, str]] = []  # (method, path?query, what the proxy did)
        self.port = 0
        self._http = httpx.AsyncClient(timeout=None)
        self._server: tornado.httpserver.HTTPServer | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def start(self) -> FlakyProxy:
        app = tornado.web.Application([(r"/.*", _ProxyHandler, {"proxy": self})])
        self._server = tornado.httpserver.HTTPServer(app)
        sockets = tornado.netutil.bind_sockets(0, "127.0.0.1")
        self._server.add_sockets(sockets)
        self.port = sockets[0].getsockname()[1]
        return self

    async def stop(self) -> None:
        if self._server is not None:
            self._server.stop()
            await self._server.close_all_connections()
        await self._http.aclose()

    def count(self, what: str) -> int:
        return sum(1 for *_, did in self.seen if did == what)


class _ProxyHandler(tornado.web.RequestHandler):
    def initialize(self, proxy: FlakyProxy) -> None:
        self.proxy = proxy

    async def get(self) -> None:
        await self._forward()

    async def post(self) -> None:
        await self._forward()

    def _upstream(self) -> Any:
        headers = {k: v for k in FORWARDED_HEADERS if (v := self.request.headers.get(k)) is not None}
        return self.proxy._http.request(
            self.request.method or "GET", self.proxy.upstream + self.request.uri, headers=headers, content=self.request.body
        )

    def _cut(self) -> None:
        """Drop the client's TCP connection with no response."""
        self.request.connection.stream.close()  # type: ignore[attr-defined]
        self._finished = True  # nothing more to write on a dead link

    async def _forward(self) -> None:
        p, method, uri = self.proxy, self.request.method or "GET", self.request.uri or ""
        if p.fail_next > 0:
            p.fail_next -= 1
            p.seen.append((method, uri, "503"))
            self.set_status(503)
            self.finish("<html>503 Service Unavailable</html>")
            return
        if p.drop_next_wait > 0 and method == "GET" and "wait=" in uri:
            p.drop_next_wait -= 1
            p.seen.append((method, uri, "cut mid-wait"))
            pending = asyncio.ensure_future(self._upstream())  # the daemon is really waiting
            await asyncio.sleep(0.1)
            self._cut()
            pending.cancel()
            p.dropped.set()
            return
        response = await self._upstream()
        if p.lose_next_post > 0 and method == "POST":
            p.lose_next_post -= 1
            p.seen.append((method, uri, f"lost {response.status_code}"))
            self._cut()
            return
        p.seen.append((method, uri, str(response.status_code)))
        self.set_status(response.status_code)
        for key in ("Content-Type", "Idempotent-Replayed"):
            if key in response.headers:
                self.set_header(key, response.headers[key])
        self.finish(response.content)


class TcpForwarder:
    """A TCP relay to the daemon that the test can cut (every live link
    dropped at once, as a network failure would) and keep down (new
    connections are closed at once) until it is restored."""

    def __init__(self, upstream_port: int) -> None:
        self.upstream_port = upstream_port
        self.down = False
        self.port = 0
        self._server: asyncio.Server | None = None
        self._links: set[asyncio.StreamWriter] = set()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def start(self) -> TcpForwarder:
        self._server = await asyncio.start_server(self._relay, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    def cut(self, keep_down: bool = True) -> None:
        self.down = keep_down
        for writer in list(self._links):
            writer.transport.abort()
        self._links.clear()

    async def stop(self) -> None:
        self.cut()
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()

    async def _relay(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if self.down:
            writer.transport.abort()
            return
        up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.upstream_port)
        self._links.update((writer, up_writer))

        async def pipe(src: asyncio.StreamReader, dst: asyncio.StreamWriter) -> None:
            try:
                while data := await src.read(65536):
                    dst.write(data)
                    await dst.drain()
            except (ConnectionError, OSError):
                pass
            finally:
                dst.transport.abort()

        await asyncio.gather(pipe(reader, up_writer), pipe(up_reader, writer))
