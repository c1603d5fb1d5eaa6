"""Which connections an admin's disconnect names: one rule, for this node's
connections and for those another node lists on a shared store."""

from __future__ import annotations

from dataclasses import dataclass
from collections.abc import Collection
from typing import Any

from askd.core.records import ALL_SESSIONS, Connection


@dataclass(slots=True, frozen=True)
class Selector:
    """The spec's disconnect selector. An empty one names nobody; ``everyone``
    names every connection."""

    user_id: str | None = None
    session_id: str | None = None
    connection_id: str | None = None
    everyone: bool = False

    @classmethod
    def from_wire(cls, body: dict[str, Any]) -> Selector:
        """From the wire's ``userId``/``sessionId``/``connectionId``/``all``."""
        return cls(body.get("userId"), body.get("sessionId"), body.get("connectionId"), bool(body.get("all")))

    def to_wire(self) -> dict[str, Any]:
        out: dict[str, Any] = {"all": self.everyone}
        for key, value in (("userId", self.user_id), ("sessionId", self.session_id), ("connectionId", self.connection_id)):
            if value is not None:
                out[key] = value
        return out

    @property
    def empty(self) -> bool:
        return not (self.everyone or self.user_id or self.session_id or self.connection_id)


def matches(conn: Connection, selector: Selector, owner: Collection[str] = ()) -> bool:
    """Whether ``selector`` names ``conn``. ``owner`` is who the selector's
    session is for (their ``*`` subscribers get that session's events)."""
    if selector.empty:
        return False
    if selector.user_id and conn.user_id != selector.user_id:
        return False
    if selector.connection_id and conn.id != selector.connection_id:
        return False
    return not selector.session_id or subscribed(conn, selector.session_id, owner)


def subscribed(conn: Connection, session_id: str, owner: Collection[str]) -> bool:
    """Whether ``conn`` gets the session's events on subscribe: subscribed
    to it, or the connection of a user it is for (``owner``: its owner, or
    the audience of its questions) subscribed to ``*``."""
    subs = conn.subscriptions
    return session_id in subs or (ALL_SESSIONS in subs and conn.user_id in owner)
