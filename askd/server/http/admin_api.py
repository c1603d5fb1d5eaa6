"""The admin API (spec section 6). Admin listener only, role ``admin``."""

from __future__ import annotations

import time
from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, StrictBool

from askd.channels import sample as notify_sample
from askd.addresses import EmailAddress
from askd.core import NotFound, Request
from askd.core.away import Away
from askd.protocol.action import ApproveBody
from askd.protocol.ids import Id
from askd.protocol.models import AnswerBody, AwayBody, DeclineBody, GroupBody, UserBody
from askd.server.front_door.proxy import public_base
from askd.server.context import Context
from askd.server.http.base import ApiError, ApiHandler
from askd.server.metrics import CONTENT_TYPE
from askd.store.parts import EMAIL


class _AdminHandler(ApiHandler):
    role = "admin"

    def optional_query_id(self, name: str) -> str | None:
        value = self.get_query_argument(name, None)
        return None if value is None else self.path_id(value, name)


class PendingHandler(_AdminHandler):
    async def get(self) -> None:
        sid = self.get_query_argument("sessionId", None)
        pending = await self.ctx.hub.pending(
            session_id=None if sid is None else self.session_id(sid),
            user_id=self.optional_query_id("userId"),
        )
        self.send_json({"pending": [self.listed(r) for r in pending]})

    def listed(self, req: Request) -> dict[str, Any]:
        """A pending question as the admin sees it: with what became of its
        notifications on this node, once there is something to say."""
        out = req.describe()
        deliveries = self.ctx.hub.webhooks.deliveries.of(req.request_id)
        if deliveries:
            out["deliveries"] = deliveries
        return out


class _EndHandler(_AdminHandler):
    """Ends a pending question as if its user had: ``end`` calls the hub
    with the admin's name (its token's ``sub``) and ``via`` ``admin``."""

    body: type[AnswerBody] | type[DeclineBody] | type[ApproveBody]

    async def post(self, session_id: str, request_id: str) -> None:
        sid = self.session_id(session_id)
        rid = self.path_id(request_id, "requestId")
        body, _ = self.json_body(self.body)
        by = self.principal.sub if self.principal is not None else None
        reply = await self.end(sid, rid, body, by)  # NotPending, InvalidAnswer, AlreadyVoted: base.py's codes
        self.send_json({"accepted": True, **(reply or {})})

    async def end(self, sid: str, rid: str, body: Any, by: str | None) -> dict[str, Any] | None:
        raise NotImplementedError


class AnswerHandler(_EndHandler):
    body = AnswerBody

    async def end(self, sid: str, rid: str, body: Any, by: str | None) -> None:  # type: ignore[override]
        await self.ctx.hub.answer(sid, rid, body.answers, user_id=None, via="admin", answered_by=by)


class DeclineHandler(_EndHandler):
    body = DeclineBody

    async def end(self, sid: str, rid: str, body: Any, by: str | None) -> None:  # type: ignore[override]
        await self.ctx.hub.decline(sid, rid, body.reason, user_id=None, via="admin", answered_by=by)


class ApproveHandler(_EndHandler):
    """One approval of an action (section 17) by the admin token's ``sub``
    (without one, ``by`` is null and all such approvals are one approver)."""

    body = ApproveBody

    async def end(self, sid: str, rid: str, body: Any, by: str | None) -> dict[str, Any]:
        req = await self.ctx.hub.approve(sid, rid, body.arguments, body.scope, user_id=None, via="admin", answered_by=by)
        assert req.approval is not None
        return {"approvals": req.approvals, "needed": req.approval.quorum}


class ConnectionsHandler(_AdminHandler):
    async def get(self) -> None:
        conns = await self.ctx.hub.list_connections(self.optional_query_id("userId"))
        self.send_json({"connections": conns})


class DisconnectBody(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    userId: Id | None = None
    sessionId: Id | None = None
    connectionId: Id | None = None
    all: StrictBool = False
    mode: Literal["abort", "close"] = "abort"


class DisconnectHandler(_AdminHandler):
    async def post(self) -> None:
        body, _ = self.json_body(DisconnectBody)
        if not (body.all or body.userId or body.sessionId or body.connectionId):
            raise ApiError("invalid_request", "name userId, sessionId or connectionId, or set all: true")
        if body.sessionId is not None:
            self.no_wildcard(body.sessionId)  # an Id already (DisconnectBody)
        selector = body.model_dump(exclude={"mode"}, exclude_none=True)
        self.send_json({"disconnected": await self.ctx.hub.disconnect_matching(selector, body.mode)})


class CancelHandler(_AdminHandler):
    async def post(self, session_id: str) -> None:
        sid = self.session_id(session_id)
        by = self.principal.sub if self.principal is not None else None  # the admin token's, recorded as the canceller
        self.send_json({"cancelled": await self.ctx.hub.cancel_session(sid, agent=by, via="admin")})


class RevokeAllHandler(_AdminHandler):
    """Every token issued until now is refused from now on, on every node
    (``auth.not_before``); open sockets that used one are closed with 4001."""

    async def post(self) -> None:
        at = round(time.time(), 3)
        await self.ctx.hub.revoke_before(at)
        self.send_json({"notBefore": at})


class GroupsHandler(_AdminHandler):
    async def get(self) -> None:
        groups = await self.ctx.hub.groups()
        self.send_json({"groups": [{"group": g, "members": list(m)} for g, m in sorted(groups.items())]})


class GroupHandler(_AdminHandler):
    async def put(self, group: str) -> None:
        name = self.path_id(group, "group")
        body, _ = self.json_body(GroupBody)
        change = await self.ctx.hub.decide(lambda registry: registry.prepare_group_set(name, body.members), fresh=False)
        self.send_json({"group": name, "members": list(change.members)})

    async def delete(self, group: str) -> None:
        name = self.path_id(group, "group")
        # Not taken: none, or another node deleted it first (NotFound: base.py's 404).
        await self.ctx.hub.decide(lambda registry: registry.prepare_group_delete(name), refused=NotFound(f"no group {name}"))
        self.send_json({"deleted": True})


class UserHandler(_AdminHandler):
    """A user's e-mail address and Slack user id. Any user id may have
    them: askd keeps no list of users (a token names them), so an id with
    none reads ``"email": null`` rather than 404. While the user is away
    (their questions also go to delegates), a read shows it too (``"away"``)."""

    async def get(self, user: str) -> None:
        uid = self.path_id(user, "user")
        self.send_json(await self.ctx.hub.user(uid))

    async def put(self, user: str) -> None:
        uid = self.path_id(user, "user")
        body, _ = self.json_body(UserBody)
        given = {name: getattr(body, name) for name in ("email", "slack") if name in body.model_fields_set}
        self.send_json(await self.ctx.hub.set_user(uid, **given))


class AwayHandler(_AdminHandler):
    """A user's away, with delegates (protocol section 6): ``PUT`` starts or replaces
    it, ``DELETE`` ends it (``404`` when the user is not away)."""

    async def put(self, user: str) -> None:
        uid = self.path_id(user, "user")
        body, _ = self.json_body(AwayBody)
        until = rfc3339_seconds(body.until, "until")
        # The groups as the cluster holds them; InvalidRequest: base.py's 400.
        change = await self.ctx.hub.decide(lambda registry: registry.prepare_away(uid, until, body.delegates))
        self.send_json(Away(change.until, change.delegates).wire(uid))

    async def delete(self, user: str) -> None:
        uid = self.path_id(user, "user")
        # Not away, or another node ended it first (NotFound: base.py's 404).
        await self.ctx.hub.decide(lambda registry: registry.prepare_back(uid), refused=NotFound(f"{uid} is not away"))
        self.send_json({"user": uid, "away": None})


def rfc3339_seconds(value: str, name: str) -> float:
    """An RFC 3339 time with its offset, as epoch seconds; ``400`` otherwise."""
    try:
        at = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise ApiError("invalid_request", f"{name} must be an RFC 3339 time") from None
    if at.tzinfo is None or "T" not in value.upper():
        raise ApiError("invalid_request", f"{name} must be an RFC 3339 time with its offset (Z or +hh:mm)")
    return at.timestamp()


class StatsHandler(_AdminHandler):
    async def get(self) -> None:
        hub = self.ctx.hub
        self.send_json(
            {
                **await hub.stats(),
                "version": self.ctx.version,
                "node": hub.node_id,
                "store": hub.store_kind,
                "storeStatus": "degraded" if hub.degraded else "ok",
                "auditRecords": await audit.count() if (audit := hub.store.audit) is not None else None,
                "uptimeSeconds": round(time.time() - hub.started_at, 3),
                "port": self.ctx.ports.get("port"),
                "adminPort": self.ctx.ports.get("admin_port"),
                "publicUrl": public_base(self.ctx.settings, "https" if self.ctx.settings.tls.enabled else "http", self.ctx.ports.get("port", 0)),
            }
        )


class NotifyTestBody(BaseModel):
    """``POST /admin/v1/notify/test``: whom the sample is about, and where
    to mail it (default: the address askd keeps for that user)."""

    model_config = ConfigDict(extra="forbid", strict=True)

    user: Id = "you"
    email: EmailAddress | None = None  # any well-formed address, intranet domains too (askd.addresses)


class NotifyTestHandler(_AdminHandler):
    """Send ``askd notify test``'s sample through this daemon's own channels
    (its settings, not the caller's), once each, and report what each
    receiver answered. Nothing enters the registry; the targets are only
    the configured ones (the body names no URL)."""

    async def post(self) -> None:
        body, _ = self.json_body(NotifyTestBody)
        s = self.ctx.settings
        to = body.email
        if to is None and s.notify.smtp_url is not None:
            to = (await self.ctx.hub.store.directory.get(EMAIL, [body.user])).get(body.user)
        scheme = "https" if s.tls.enabled else "http"
        report = await notify_sample.run(
            s.notify,
            public_url=str(s.public_url) if s.public_url else None,
            link_base=public_base(s, scheme, self.ctx.ports.get("port", 0)),
            secret=self.ctx.secret,
            user=body.user,
            email=to,
            timeout=s.question_timeout_seconds,
        )
        self.send_json(report)


class MetricsHandler(_AdminHandler):
    def get(self) -> None:
        self.set_header("Content-Type", CONTENT_TYPE)
        self.finish(self.ctx.hub.metrics.render())


def routes(ctx: Context) -> list[tuple[str, type, dict[str, Any]]]:
    seg = r"([^/]+)"
    return [
        (r"/admin/v1/pending", PendingHandler, {"ctx": ctx}),
        (rf"/admin/v1/sessions/{seg}/questions/{seg}/answer", AnswerHandler, {"ctx": ctx}),
        (rf"/admin/v1/sessions/{seg}/questions/{seg}/decline", DeclineHandler, {"ctx": ctx}),
        (rf"/admin/v1/sessions/{seg}/questions/{seg}/approve", ApproveHandler, {"ctx": ctx}),
        (r"/admin/v1/connections", ConnectionsHandler, {"ctx": ctx}),
        (r"/admin/v1/disconnect", DisconnectHandler, {"ctx": ctx}),
        (rf"/admin/v1/sessions/{seg}/cancel", CancelHandler, {"ctx": ctx}),
        (r"/admin/v1/stats", StatsHandler, {"ctx": ctx}),
        (r"/admin/v1/groups", GroupsHandler, {"ctx": ctx}),
        (rf"/admin/v1/groups/{seg}", GroupHandler, {"ctx": ctx}),
        (rf"/admin/v1/users/{seg}", UserHandler, {"ctx": ctx}),
        (rf"/admin/v1/users/{seg}/away", AwayHandler, {"ctx": ctx}),
        (r"/admin/v1/tokens/revoke-all", RevokeAllHandler, {"ctx": ctx}),
        (r"/admin/v1/notify/test", NotifyTestHandler, {"ctx": ctx}),
        (r"/metrics", MetricsHandler, {"ctx": ctx}),
    ]
