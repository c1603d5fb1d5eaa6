"""``[limits]``: the caps on sizes, counts, rates and timeouts (docs/security.md)."""

from __future__ import annotations

from pydantic import Field

from askd.config.section import Section


class LimitsSettings(Section):
    max_message_bytes: int = Field(65536, ge=256, le=16 * 1024 * 1024, description="Largest WebSocket frame accepted; larger closes with 1009.")
    max_request_bytes: int = Field(65536, ge=1024, le=16 * 1024 * 1024, description="Largest HTTP request body accepted; larger gets 413.")
    max_questions: int = Field(20, ge=1, le=1000, description="Most questions in one ask.")
    max_pending_per_session: int = Field(100, ge=1, description="Most pending questions in one session (429 beyond).")
    max_pending_total: int = Field(100_000, ge=1, description="Most pending questions in the daemon (429 beyond).")
    max_wait_seconds: float = Field(300.0, gt=0, description="Longest ?wait= long-poll; longer waits are shortened to it.")
    max_connections_per_user: int = Field(64, ge=1, description="Most open WebSocket connections per user; more are refused with 1008.")
    max_buffered_bytes: int = Field(4 * 1024 * 1024, ge=65536, description="Outgoing bytes a slow WebSocket peer may leave unread before it is dropped.")
    frames_per_second: float = Field(50.0, gt=0, description="Sustained client frames per second per connection.")
    frames_burst: int = Field(200, ge=1, description="Client frames allowed in a burst above the sustained rate.")
    body_timeout_seconds: float = Field(30.0, gt=0, description="A request body must arrive whole within this; else the connection ends.")
    idle_timeout_seconds: float = Field(
        60.0, gt=0, description="An HTTP connection with no request (or no complete headers) for this long is closed."
    )
    header_timeout_seconds: float = Field(
        10.0,
        gt=0,
        description=(
            "A connection none of whose requests has carried a valid token must send each request's headers within "
            "this (from accept, or from its last answer); else it is closed."
        ),
    )
    max_connections: int = Field(
        20_000,
        ge=1,
        description=(
            "Most open connections to the public listener. Those without a valid token yet may hold half; past that, "
            "a new connection closes the oldest of them."
        ),
    )
    max_admin_connections: int = Field(
        1000, ge=1, description="Most open connections to the admin listener, a pool of its own (as max_connections)."
    )
    max_connections_per_address: int = Field(
        1000,
        ge=0,
        description=(
            "Most open connections from one TCP peer address, per listener; 0: no cap. trusted_proxies are exempt "
            "(each carries many clients); raise it for a NAT or a proxy not listed there."
        ),
    )
    max_subscriptions_per_connection: int = Field(
        256, ge=1, description="Most sessions one WebSocket may subscribe to; more get error too_many_subscriptions."
    )
    max_pending_bytes_per_user: int = Field(
        16 * 1024 * 1024, ge=65536, description="Most bytes of pending questions for one user (429 too_many_pending beyond)."
    )
    # Per agent token sub (tokens without one count as one agent) and in all: docs/security.md.
    max_pending_per_agent: int = Field(
        10_000, ge=1, description="Most pending questions one agent (token sub) may hold (429 too_many_pending beyond)."
    )
    max_pending_bytes_per_agent: int = Field(
        64 * 1024 * 1024, ge=65536, description="Most bytes of pending questions one agent (token sub) may hold (429 beyond)."
    )
    max_user_share_per_agent: float = Field(
        0.5, gt=0, le=1, description="Share of each user's max_pending_bytes_per_user one agent may fill (429 beyond)."
    )
    max_pending_bytes_total: int = Field(
        512 * 1024 * 1024, ge=65536, description="Most bytes of pending questions in the daemon (429 too_many_pending beyond)."
    )
