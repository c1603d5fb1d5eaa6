"""The front door: what is refused before a request is read.

Each listener has its own pool of connections (the admin listener is never
crowded out by the public one), capped in total and per TCP peer address.
A connection is *unproven* until one of its requests carries a valid token
(an API request, or a WebSocket upgrade); unproven connections may hold at
most half of their pool, must send each request's headers within
``limits.header_timeout_seconds``, and when their half (or the pool) is
full, a new connection closes the oldest of them instead of being refused.
So idle sockets opened by anyone cannot lock out agents, tabs, ``/healthz``
or the admin API (docs/security.md). One over the per-address cap, or over
a pool held entirely by proven connections, is closed as soon as it is
accepted. A request's ``Host`` must name this daemon, so that a page whose
DNS name was re-pointed at 127.0.0.1 (DNS rebinding) cannot reach it from a
browser.
"""

from __future__ import annotations

import asyncio
import copy
import fcntl
import ipaddress
import os
import socket
import struct
import termios
import time
from collections.abc import Callable, Iterable
from typing import Any

import tornado.httpserver
from tornado.iostream import IOStream

from askd.server.logs import get_logger

log = get_logger("askd.http")

# An address refused again within this many seconds is not logged again.
REFUSAL_LOG_SECONDS = 60.0
_WILDCARDS = {"", "0.0.0.0", "::", "*"}
# The share of a pool unproven connections may hold.
UNPROVEN_SHARE = 0.5


class Slot:
    """One open connection of a pool, from accept to close."""

    __slots__ = ("address", "stream", "params", "proven", "evicted", "caps", "idle")

    def __init__(self, address: str, stream: IOStream) -> None:
        self.address, self.stream = address, stream
        self.params: Any = None  # its own HTTP1ConnectionParameters (the header timeout changes once proven)
        self.proven = self.evicted = False
        self.caps: ConnectionCaps | None = None  # the pool it counts in, and the idle timeout it gets once proven
        self.idle = 3600.0


class ConnectionCaps:
    """One listener's open connections: ``total`` in all, ``per_address``
    from one peer (0: no cap; addresses ``exempt`` says are never capped,
    the trusted proxies that carry many clients), and at most
    ``UNPROVEN_SHARE`` of ``total`` unproven."""

    def __init__(self, total: int, per_address: int, exempt: Callable[[str], bool] = lambda _: False, name: str = "limits.max_connections") -> None:
        self.total, self.per_address, self.exempt, self.name = total, per_address, exempt, name
        self.unproven_cap = max(1, int(total * UNPROVEN_SHARE))
        self.open = 0
        self.by_address: dict[str, int] = {}
        # Unproven slots, oldest first (dicts keep insertion order).
        self.unproven: dict[Slot, None] = {}
        self.evicted = 0  # unproven connections closed to make room, since start
        self._logged: dict[str, float] = {}  # address -> when its refusal was last logged

    def admit(self, address: str, stream: IOStream) -> Slot | None:
        """A slot for a new connection from ``address``, or None: it is over a cap."""
        held = self.by_address.get(address, 0)
        if self.per_address and held >= self.per_address and not self.exempt(address):
            self._refused(address, "limits.max_connections_per_address", self.per_address)
            return None
        if self.open >= self.total or len(self.unproven) >= self.unproven_cap:
            if not self.unproven:
                self._refused(address, self.name, self.total)
                return None
            self._evict(next(iter(self.unproven)))
        slot = Slot(address, stream)
        self.open += 1
        self.by_address[address] = held + 1
        self.unproven[slot] = None
        return slot

    def prove(self, slot: Slot, idle_timeout: float) -> None:
        """A request on ``slot`` carried a valid token: it stays, and waits
        for its next request as long as ``limits.idle_timeout_seconds``."""
        if slot.proven:
            return
        slot.proven = True
        self.unproven.pop(slot, None)
        if slot.params is not None:
            slot.params.header_timeout = idle_timeout

    def release(self, slot: Slot) -> None:
        self.unproven.pop(slot, None)
        self.open -= 1
        left = self.by_address[slot.address] - 1
        if left:
            self.by_address[slot.address] = left
        else:
            del self.by_address[slot.address]

    def _evict(self, slot: Slot) -> None:
        # Out of the count at once (its socket is closed without a linger):
        # the new connection takes its place.
        slot.evicted = True
        self.evicted += 1
        self._refused("", "evict", self.unproven_cap)
        slot.stream.close()

    def _refused(self, address: str, setting: str, cap: int) -> None:
        now = time.monotonic()
        if now - self._logged.get(address, -REFUSAL_LOG_SECONDS) < REFUSAL_LOG_SECONDS:
            return
        if len(self._logged) > 10_000:  # a flood from many addresses keeps the map bounded
            self._logged = {a: t for a, t in self._logged.items() if now - t < REFUSAL_LOG_SECONDS}
        self._logged[address] = now
        if setting == "evict":
            log.warning("http.unproven_evicted", cap=cap, listener=self.name, evicted=self.evicted)
        else:
            log.warning("http.connection_refused", remote=address, setting=setting, cap=cap)


def prove(connection: Any) -> None:
    """The request on ``connection`` (a handler's ``request.connection``)
    carried a valid token: its connection is proven (``ConnectionCaps.prove``)."""
    stream = getattr(connection, "stream", None)
    slot: Slot | None = getattr(stream, "askd_slot", None)
    if slot is not None and slot.caps is not None:
        slot.caps.prove(slot, slot.idle)


class CappedHTTPServer(tornado.httpserver.HTTPServer):
    """An HTTPServer whose connections count against its ``caps``; an
    unproven connection waits for a request's headers at most
    ``header_timeout`` seconds, a proven one ``idle_connection_timeout``."""

    def initialize(self, *args: Any, caps: ConnectionCaps, header_timeout: float, **kwargs: Any) -> None:  # type: ignore[override]
        super().initialize(*args, **kwargs)
        self.caps = caps
        self.idle_timeout = float(self.conn_params.header_timeout or 3600)  # Tornado's, from idle_connection_timeout
        self.header_timeout = min(header_timeout, self.idle_timeout)

    def handle_stream(self, stream: IOStream, address: tuple[Any, ...]) -> None:
        peer = str(address[0]) if address else ""
        slot = self.caps.admit(peer, stream)
        if slot is None:
            stream.close()
            return
        # Two attributes on the stream, no more (this one and ``close``): an
        # IOStream has 27, and past 30 each stream's __dict__ stops sharing
        # its keys with the class's and grows to 1.5 KB (docs/performance.md).
        slot.caps, slot.idle = self.caps, self.idle_timeout
        stream.askd_slot = slot  # type: ignore[attr-defined]
        # The count must follow the socket, not the HTTP connection: a
        # WebSocket upgrade detaches the stream from it and lives on. Every
        # way a stream ends goes through its close().
        close = stream.close

        def close_and_release(exc_info: Any = False) -> None:
            if stream.closed():
                return
            self.caps.unproven.pop(slot, None)  # never picked to make room while it lingers
            kept = None if slot.evicted else _linger_socket(stream)
            close(exc_info)
            del stream.close  # the instance's own: breaks the stream -> closure -> stream cycle
            if kept is None:
                self.caps.release(slot)
            else:
                _Linger(kept, lambda: self.caps.release(slot))

        stream.close = close_and_release  # type: ignore[method-assign]
        # This connection's own parameters: Tornado reads header_timeout
        # before each request, and prove() lengthens it.
        shared = self.conn_params
        slot.params = self.conn_params = copy.copy(shared)
        slot.params.header_timeout = self.header_timeout
        try:
            super().handle_stream(stream, address)
        finally:
            self.conn_params = shared


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
