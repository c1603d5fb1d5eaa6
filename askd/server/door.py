"""The front door: what is refused before a request is read.

Connections are capped in total (both listeners share one count) and per
TCP peer address; one over a cap is closed as soon as it is accepted, never
left waiting. A request's ``Host`` must name this daemon, so that a page
whose DNS name was re-pointed at 127.0.0.1 (DNS rebinding) cannot reach it
from a browser.
"""

from __future__ import annotations

import ipaddress
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
            if not stream.closed():
                close(exc_info)
                self.caps.release(peer)

        stream.close = close_and_release  # type: ignore[method-assign]
        super().handle_stream(stream, address)


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
