"""This node's WebSocket sockets (the hub's part): the peers the hub
connected, what the flush writes to them, every node's listing, and the
closes an admin's disconnect orders. The hub tells the store each change
of presence (``Hub.connect``, ``subscribe``, ...)."""

from __future__ import annotations

from typing import Any, Protocol

from askd.core import Connection
from askd.core.registry import Registry
from askd.core import events as ev
from askd.core.selectors import Selector, matches
from askd.server.logs import get_logger
from askd.store import Store, StoreUnavailable

log = get_logger("askd.hub")


class Peer(Protocol):
    """What the hub needs of a WebSocket connection."""

    def send_frame(self, frame: bytes) -> None: ...

    def close_peer(self, code: int, reason: str) -> None: ...

    def abort_peer(self) -> None: ...


class Connections:
    def __init__(self, registry: Registry, store: Store, node_id: str) -> None:
        self._registry, self._store, self._node_id = registry, store, node_id
        self.peers: dict[str, Peer] = {}

    def deliver(self, sends: list[ev.Send]) -> None:
        for send in sends:
            frame = send.event.frame  # encoded once for every connection
            for conn_id in send.to:
                peer = self.peers.get(conn_id)
                if peer is not None:
                    peer.send_frame(frame)

    # ---- the admin's view -----------------------------------------------

    def matching(self, selector: Selector) -> list[Connection]:
        """This node's connections ``selector`` names."""
        owner = self._registry.session_users(selector.session_id) if selector.session_id else set()
        return [c for c in self._registry.connections() if matches(c, selector, owner)]

    async def listing(self) -> list[dict[str, Any]]:
        """Every connection, on every node, with its node: this node's from
        its registry (always current: presence is written after the change,
        and an ack must not be contradicted by the listing that follows it),
        the other nodes' from the store, in the order of the nodes."""
        node = self._node_id
        others = [c for c in await self._store.cluster.connections() if c["node"] != node] if self._store.shared else []
        own = [{**c.describe(), "node": node} for c in self._registry.connections()]
        return sorted(others + own, key=lambda c: c["node"])  # stable: each node's in its own order

    async def online_elsewhere(self, *users: str) -> bool:
        """Whether one of the users has a connection on another node and
        none on this one (the core checks this node's); False when the
        store cannot say."""
        if not users or any(self._registry.connections(u) for u in users):
            return False
        try:
            return any(c["node"] != self._node_id and c["userId"] in users for c in await self.listing())
        except StoreUnavailable:
            return False

    def on_command(self, command: dict[str, Any]) -> None:
        if "disconnect" in command:
            self.drop(self.matching(Selector.from_wire(command["disconnect"])), command["mode"])

    def drop(self, conns: list[Connection], mode: str) -> int:
        """Close connections: ``abort`` drops TCP with no close handshake (a
        network failure), ``close`` sends close code 1001."""
        n = 0
        for conn in conns:
            peer = self.peers.get(conn.id)
            if peer is None:
                continue
            if mode == "abort":
                peer.abort_peer()
            else:
                peer.close_peer(1001, "closed by admin")
            n += 1
        return n

    def close_all(self, reason: str) -> None:
        for peer in list(self.peers.values()):
            peer.close_peer(1001, reason)
