"""What every handler shares, in a module of its own: the token check
(``door/auth.py``) and the handlers' base (``http/base.py``) both read it, and neither
may import the other for it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from askd.config import Settings
from askd.server.hub.hub import Hub
from askd.server.ws.pinger import Pinger


@dataclass
class Context:
    """Everything handlers share, passed to each as ``initialize(ctx=...)``."""

    hub: Hub
    secret: str
    settings: Settings
    version: str
    pinger: Pinger  # keeps every WebSocket alive
    ports: dict[str, int] = field(default_factory=dict)  # as bound (a port of 0 picks one)
    public_origin: str | None = None  # the origin of settings.public_url
    # auth.not_before, moved later (never earlier) by `askd token revoke-all`.
    not_before: float = 0.0
    receipts: Any = None  # askd.server.http.receipting.Receipts: signs ended results, publishes the JWKS
