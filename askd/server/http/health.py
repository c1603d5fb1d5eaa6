"""The handlers that answer without a route of their own: ``/healthz``, an
unknown path, a ``Host`` that does not name this daemon."""

from __future__ import annotations

import time
from typing import Any

from askd.server.context import Context
from askd.server.front_door.auth import bearer_token, revoked
from askd.server.http.base import ApiError, ApiHandler
from askd.tokens import TokenError, verify


class NotFoundHandler(ApiHandler):
    """Every unknown path: a JSON 404 (no token needed to learn nothing)."""

    def prepare(self) -> None:
        raise ApiError("not_found", f"no such path: {self.request.path}")


class WrongHostHandler(ApiHandler):
    """A request whose ``Host`` does not name this daemon (DNS rebinding)."""

    def prepare(self) -> None:
        raise ApiError("forbidden", "this Host is not one of askd's (see allowed_hosts and public_url)")


class HealthHandler(ApiHandler):
    """``/healthz``: anyone may ask whether askd is up; what it runs (version,
    node, store) is told on the admin listener or to a token holder."""

    def initialize(self, ctx: Context, detailed: bool = False) -> None:  # type: ignore[override]
        super().initialize(ctx)
        self.detailed = detailed

    def _may_see_details(self) -> bool:
        if self.detailed:
            return True
        token = bearer_token(self.request)
        if token is None:
            return False
        try:
            return not revoked(self.ctx, verify(self.ctx.secret, token))
        except TokenError:
            return False

    def get(self) -> None:
        hub = self.ctx.hub
        health = hub.health()
        failing = health.failing  # deadlines whose handling fails, retried (protocol section 6)
        body: dict[str, Any] = {"status": "degraded" if health.degraded or failing else "ok"}
        if self._may_see_details():
            body.update(version=self.ctx.version, time=time.time(), store=hub.store_kind, node=hub.node_id)
            # Deadlines whose handling fails (protocol section 6): still
            # retried; a monitor alerts on ``failing`` above 0.
            body["deadlines"] = {"failing": len(failing), "since": failing[0].since if failing else None}
            if health.degraded:
                body["reason"] = "the store refuses writes"
            elif failing:
                body["reason"] = f"{len(failing)} deadline(s) fail and are retried (the log's deadline.failed names them)"
        # 503 only while the store refuses writes: taking this node out of
        # service mends no failing deadline, and a probe must not restart it.
        self.send_json(body, 503 if health.degraded else 200)
