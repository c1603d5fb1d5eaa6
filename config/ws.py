"""``[ws]``: the daemon's WebSocket pings."""

from __future__ import annotations

from pydantic import Field

from askd.config.section import Section


class WebSocketSettings(Section):
    ping_interval_seconds: float = Field(20.0, gt=0, description="How often the daemon pings each WebSocket peer.")
    ping_timeout_seconds: float = Field(30.0, gt=0, description="A peer that answers no ping for this long is dropped.")
