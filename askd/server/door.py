"""The front door: what is refused before a request is read.

Connections are capped in total (both listeners share one count) and per
TCP peer address; one over a cap is closed as soon as it is accepted, never
left waiting. A request's ``Host`` must name this daemon, so that a page
whose DNS name was re-pointed at 127.0.0.1 (DNS rebinding) cannot reach it
from a browser.
"""

from __future__ import annotations

import asyncio
import fcntl
import ipaddress
import os
import socket
import struct
import termios
import time
from collections.abc import Iterable
from typing import Any

import tornado.httpserver
from tornado.iostream import IOStream

from askd.server.logs import get_logger

log = get_logger("askd.http")

# An address refused again within this many seconds is not logged again.
REFUSAL_LOG_SECONDS = 60.0
_WILDCARDS = {"", "0.0.0.0", "::", "*"}


class ConnectionCaps:
    """Open connections, counted from accept to close, across listeners."""

    def __init__(self, total: int, per_address: int) -> None:
        self.total, self.per_address = total, per_address
        self.open = 0
        self.by_address: dict[str, int] = {}
        self._logged: dict[str, float] = {}  # address -> when its refusal was last logged

    def admit(self, address: str) -> bool:
        """Count a new connection from ``address``, or say it is over a cap."""
        held = self.by_address.get(address, 0)
        if self.open >= self.total:
            self._refused(address, "limits.max_connections", self.total)
            return False
        if self.per_address and held >= self.per_address:
            self._refused(address, "limits.max_connections_per_address", self.per_address)
            return False
        self.open += 1
        self.by_address[address] = held + 1
        return True

    def release(self, address: str) -> None:
        self.open -= 1
        left = self.by_address[address] - 1
        if left:
            self.by_address[address] = left
        else:
            del self.by_address[address]

    def _refused(self, address: str, setting: str, cap: int) -> None:
        now = time.monotonic()
        if now - self._logged.get(address, -REFUSAL_LOG_SECONDS) < REFUSAL_LOG_SECONDS:
            return
        if len(self._logged) > 10_000:  # a flood from many addresses keeps the map bounded
            self._logged = {a: t for a, t in self._logged.items() if now - t < REFUSAL_LOG_SECONDS}
        self._logged[address] = now
        log.warning("http.connection_refused", remote=address, setting=setting, cap=cap)


class CappedHTTPServer(tornado.httpserver.HTTPServer):
    """An HTTPServer whose connections count against shared ``caps``."""

    def initialize(self, *args: Any, caps: ConnectionCaps, **kwargs: Any) -> None:  # type: ignore[override]
        super().initialize(*args, **kwargs)
        self.caps = caps

    def handle_stream(self, stream: IOStream, address: tuple[Any, ...]) -> None:
        peer = str(address[0]) if address else ""
        if not self.caps.admit(peer):
            stream.close()
            return
        # The count must follow the socket, not the HTTP connection: a
        # WebSocket upgrade detaches the stream from it and lives on. Every
        # way a stream ends goes through its close().
        close = stream.close

        def close_and_release(exc_info: Any = False) -> None:
            if stream.closed():
                return
            kept = _linger_socket(stream)
            close(exc_info)
            del stream.close  # the instance's own: breaks the stream -> closure -> stream cycle
            if kept is None:
                self.caps.release(peer)
            else:
                _Linger(kept, lambda: self.caps.release(peer))

        stream.close = close_and_release  # type: ignore[method-assign]
        super().handle_stream(stream, address)


# A request refused at its headers (401, 413) leaves its body unread. Closing
# a socket with unread input makes the kernel reset the connection, and the
# reset can destroy the answer before the client reads it: so askd sends its
# end (FIN) after the answer and discards what still comes, for a short
# while, before it closes (what HTTP servers call a lingering close).
LINGER_SECONDS = 2.0
LINGER_BYTES = 1024 * 1024


def _unread(fd: int) -> int:
    try:
        return int(struct.unpack("i", fcntl.ioctl(fd, termios.FIONREAD, b"\0\0\0\0"))[0])
    except OSError:
        return 0


def _linger_socket(stream: IOStream) -> socket.socket | None:
    """A second handle on the stream's socket, when closing it now would
    reset the connection; None otherwise."""
    sock = stream.socket
    if sock is None:
        return None
    try:
        fd = sock.fileno()
        if fd < 0 or not _unread(fd):
            return None
        return socket.socket(fileno=os.dup(fd))
    except OSError:
        return None


class _Linger:
    """Sends FIN, then reads and discards until the peer closes, for at most
    ``LINGER_SECONDS`` and ``LINGER_BYTES``; then closes the socket."""

    def __init__(self, sock: socket.socket, done: Any) -> None:
        self.sock, self.done, self.left = sock, done, LINGER_BYTES
        loop = asyncio.get_running_loop()
        try:
            sock.setblocking(False)
            sock.shutdown(socket.SHUT_WR)
            loop.add_reader(sock.fileno(), self._drain)
        except (OSError, ValueError):
            self._end()
            return
        self.timer = loop.call_later(LINGER_SECONDS, self._end)

    def _drain(self) -> None:
        try:
            got = len(self.sock.recv(65536))
        except BlockingIOError:
            return
        except OSError:
            got = 0
        self.left -= got
        if not got or self.left <= 0:
            self._end()

    def _end(self) -> None:
        if self.sock.fileno() < 0:
            return
        loop = asyncio.get_running_loop()
        loop.remove_reader(self.sock.fileno())
        if hasattr(self, "timer"):
            self.timer.cancel()
        self.sock.close()
        self.done()


def _bare(host: str) -> str:
    return host.strip().lower().removeprefix("[").removesuffix("]").rstrip(".")


def _is_ip(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


class HostRule:
    """Which ``Host`` values name this daemon (the port is not compared)."""

    def __init__(self, listen: Iterable[str], extra: Iterable[str]) -> None:
        listen = [_bare(h) for h in listen]
        # Listening on every address: any of the machine's addresses may be
        # used, and an IP literal cannot be re-pointed by DNS.
        self.any_ip = any(h in _WILDCARDS for h in listen)
        self.names = {"localhost", "127.0.0.1", "::1", *listen, *(_bare(h) for h in extra if h)}

    def allows(self, host_name: str) -> bool:
        host = _bare(host_name)
        return host in self.names or (self.any_ip and _is_ip(host))
