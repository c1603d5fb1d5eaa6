"""The agent API (spec section 5): ask, read or wait for a result, list,
cancel. Public listener, role ``agent``."""

from __future__ import annotations

import asyncio
from typing import Any
from urllib.parse import quote

import structlog

from askd.core import AskInput, NotPending, Request
from askd.core.registry.decisions import Relay
from askd.core.events import isotime
from askd.protocol.models import (
    ASK_VIAS,
    VIA_HEADER,
    AgentAnswerBody,
    AgentApproveBody,
    AgentDeclineBody,
    AskBody,
    ExtendBody,
)
from askd.protocol.relay import host_key_hash
from askd.server.context import Context
from askd.server.front_door.auth import revoked
from askd.server.http.base import ApiError, ApiHandler
from askd.server.hub.hub import ShuttingDown
from askd.server.hub.waiters import Revoked

IDEMPOTENCY_KEY_MAX = 256
REVOKED_WHILE_WAITING = "token was revoked (askd token revoke-all) while waiting; get a new one"


class _AgentHandler(ApiHandler):
    role = "agent"

    def initialize(self, ctx: Context) -> None:
        super().initialize(ctx)
        self._gone: asyncio.Future[None] | None = None

    @property
    def agent(self) -> str | None:
        """The token's ``sub``: with one, this agent reaches only the
        sessions it first asked in (the hub passes it to the registry)."""
        assert self.principal is not None  # prepare() checked the token
        return self.principal.sub

    def on_connection_close(self) -> None:
        # Tornado's own ends a wait for the rest of a streamed body; without
        # it a client that hung up mid-body left this handler waiting forever.
        super().on_connection_close()
        # The agent hung up: stop waiting for it, never touch the question.
        if self._gone is not None and not self._gone.done():
            self._gone.set_result(None)

    async def wait_for(self, req: Request, seconds: float) -> Request:
        if self.ctx.hub.stopping:
            raise ApiError("shutting_down", "askd is stopping")
        assert self.principal is not None  # prepare() checked the token
        if revoked(self.ctx, self.principal):  # revoked since prepare() looked
            raise ApiError("unauthorized", REVOKED_WHILE_WAITING)
        self._gone = asyncio.get_running_loop().create_future()
        try:
            return await self.ctx.hub.wait(req, seconds, self._gone, self.principal.iat)
        except Revoked:
            raise ApiError("unauthorized", REVOKED_WHILE_WAITING) from None
        except ShuttingDown:
            if not self.ctx.hub.durable:
                fate = "the question is lost (store = memory keeps nothing across a restart)"
            else:
                # The exact call: a second POST would ask twice (without an Idempotency-Key).
                wait = f"{self.ctx.settings.limits.max_wait_seconds:g}"
                path = f"/v1/sessions/{quote(req.session_id, safe='')}/questions/{quote(req.request_id, safe='')}"
                fate = f"the question is kept: once askd is back, GET {path}?wait={wait} for its result (do not POST it again)"
            raise ApiError("shutting_down", f"askd is stopping; {fate}") from None

    def session_arg(self, session_id: str) -> str:
        sid = self.session_id(session_id)
        structlog.contextvars.bind_contextvars(sessionId=sid)
        return sid

    def ids(self, session_id: str, request_id: str) -> tuple[str, str]:
        sid = self.session_arg(session_id)
        rid = self.path_id(request_id, "requestId")
        structlog.contextvars.bind_contextvars(requestId=rid)
        return sid, rid


def pending_body(req: Request) -> dict[str, Any]:
    return {
        "requestId": req.request_id,
        "sessionId": req.session_id,
        "status": "pending",
        "createdAt": isotime(req.created_at),
        "expiresAt": isotime(req.expires_at),
    }


class QuestionsHandler(_AgentHandler):
    """``POST`` asks; ``GET`` lists the session's pending questions."""

    async def post(self, session_id: str) -> None:
        sid = self.session_arg(session_id)
        wait = self.wait_seconds()
        limits = self.ctx.settings.limits
        # The timeout's cap is the core's to check (Limits.max_timeout), once.
        body, raw = self.json_body(AskBody, {"max_questions": limits.max_questions})
        key = self.request.headers.get("Idempotency-Key")
        if key is not None and not 0 < len(key) <= IDEMPOTENCY_KEY_MAX:
            raise ApiError("invalid_request", f"Idempotency-Key must be 1 to {IDEMPOTENCY_KEY_MAX} characters")
        # Through what the agent asks, for the audit trail: askd mcp says so (protocol section 19).
        via = self.request.headers.get(VIA_HEADER, "agent")
        if via not in ASK_VIAS:
            raise ApiError("invalid_request", f"{VIA_HEADER} is one of {', '.join(ASK_VIAS)}")
        if self.ctx.hub.stopping:
            raise ApiError("shutting_down", "askd is stopping")
        if body.userId is not None:
            structlog.contextvars.bind_contextvars(userId=body.userId)
        to, escalate = body.audience()
        req, created = await self.ctx.hub.ask(
            AskInput(
                sid,
                body.userId or "",
                raw.get("questions"),  # stored and re-pushed exactly as sent (None: an action)
                metadata=raw.get("metadata"),
                timeout=body.timeoutSeconds,
                require_online=body.requireOnline,
                parent_session_id=body.parentSessionId,
                idempotency_key=key,
                agent=self.agent,
                max_extension=body.maxExtensionSeconds,
                on_timeout=raw["onTimeout"]["answers"] if body.onTimeout is not None else None,
                to=to,
                escalate=escalate,
                action=raw.get("action"),  # as sent, like questions
                quorum=body.quorum or 1,
                remind=self.remind(body),
                via=via,
                host_key_hash=host_key_hash(body.hostKey),  # only its hash is kept, never shown
            )
        )
        if not created:
            self.set_header("Idempotent-Replayed", "true")
        if wait and req.pending:
            await self.wait_for(req, wait)
        if req.pending:
            self.send_json(pending_body(req), 201)
        else:
            self.send_json(self.ctx.receipts.result(req), 200)

    def remind(self, body: AskBody) -> tuple[float, int] | None:
        """The ask's reminders: its ``remind`` (``null``: none), else the
        daemon's ``notify.remind_*``."""
        if "remind" not in body.model_fields_set:
            return self.ctx.settings.notify.remind()
        return None if body.remind is None else (body.remind.everySeconds, body.remind.times)

    async def get(self, session_id: str) -> None:
        sid = self.session_arg(session_id)
        pending = [r.describe() for r in await self.ctx.hub.pending(session_id=sid, agent=self.agent)]
        self.send_json({"sessionId": sid, "pending": pending})


def _not_found(ctx: Context, sid: str, rid: str) -> ApiError:
    # Only the guesses that can be true of this daemon: a store that does not
    # survive the process forgets every question when askd restarts.
    why = f"it was never asked there, or it ended more than {ctx.settings.result_ttl_seconds:g} s ago and its result was forgotten"
    if not ctx.hub.durable:
        why += ", or askd restarted since (store = memory keeps nothing)"
    return ApiError("not_found", f"unknown question {rid} in session {sid}: {why}")


class ResultHandler(_AgentHandler):
    """``GET`` reads (or waits for) a result; ``DELETE`` withdraws the question."""

    async def get(self, session_id: str, request_id: str) -> None:
        sid, rid = self.ids(session_id, request_id)
        wait = self.wait_seconds()
        # A wait sees the end when this node applies it; a read without one
        # must not answer pending for a question another node just ended.
        req = await self.ctx.hub.lookup(sid, rid, fresh=not wait, agent=self.agent)
        if req is None:
            raise _not_found(self.ctx, sid, rid)
        if wait and req.pending:
            await self.wait_for(req, wait)
        self.send_json(self.ctx.receipts.result(req))

    async def delete(self, session_id: str, request_id: str) -> None:
        sid, rid = self.ids(session_id, request_id)
        req = await self.ctx.hub.withdraw(sid, rid, agent=self.agent)
        if req is None:
            raise _not_found(self.ctx, sid, rid)
        self.send_json(self.ctx.receipts.result(req))


class ExtendHandler(_AgentHandler):
    """``POST``: the agent moves its own question's deadline."""

    async def post(self, session_id: str, request_id: str) -> None:
        sid, rid = self.ids(session_id, request_id)
        body, _ = self.json_body(ExtendBody)
        req = await self.ctx.hub.lookup(sid, rid, fresh=True, agent=self.agent)
        if req is None:
            raise _not_found(self.ctx, sid, rid)
        if req.pending:
            try:
                req = await self.ctx.hub.extend(sid, rid, body.seconds, user_id=None, agent=self.agent)  # NotAllowed: base.py's code
            except NotPending:
                req = self.ctx.hub.get(sid, rid)  # it ended meanwhile: its result
                if req is None:
                    raise _not_found(self.ctx, sid, rid) from None
        self.send_json(self.ctx.receipts.result(req))


class _OnBehalfHandler(_AgentHandler):
    """``POST``: the agent ends its own pending question for the person who
    answered (or declined) in the agent's own window: the MCP bridge, for an
    answer given in its host. ``answeredBy`` must be one of the question's
    audience; the first answer anywhere wins (``404 not_pending`` after).
    Only where the ask allowed its own host to relay: the same ``hostKey``,
    from a token with the asking token's ``sub`` (``403 forbidden`` otherwise,
    protocol section 5)."""

    body: type[AgentAnswerBody] | type[AgentDeclineBody] | type[AgentApproveBody]

    async def post(self, session_id: str, request_id: str) -> None:
        sid, rid = self.ids(session_id, request_id)
        body, _ = self.json_body(self.body)
        if await self.ctx.hub.lookup(sid, rid, fresh=True, agent=self.agent) is None:
            raise _not_found(self.ctx, sid, rid)
        relay = Relay(self.agent, host_key_hash(body.hostKey))
        req = await self.end(sid, rid, body, relay)  # NotPending, Forbidden, InvalidAnswer: base.py's codes
        self.send_json(self.ctx.receipts.result(req))

    async def end(self, sid: str, rid: str, body: Any, relay: Relay) -> Request:
        raise NotImplementedError


class AnswerHandler(_OnBehalfHandler):
    body = AgentAnswerBody

    async def end(self, sid: str, rid: str, body: Any, relay: Relay) -> Request:
        return await self.ctx.hub.answer(sid, rid, body.answers, user_id=body.answeredBy, via=body.via, relay=relay)


class DeclineHandler(_OnBehalfHandler):
    body = AgentDeclineBody

    async def end(self, sid: str, rid: str, body: Any, relay: Relay) -> Request:
        return await self.ctx.hub.decline(sid, rid, body.reason, user_id=body.answeredBy, via=body.via, relay=relay)


class ApproveHandler(_OnBehalfHandler):
    """One approval (a quorum may need more: the result is then still pending)."""

    body = AgentApproveBody

    async def end(self, sid: str, rid: str, body: Any, relay: Relay) -> Request:
        return await self.ctx.hub.approve(
            sid, rid, body.arguments, body.scope, user_id=body.answeredBy, via=body.via, relay=relay
        )


class CancelHandler(_AgentHandler):
    async def post(self, session_id: str) -> None:
        sid = self.session_arg(session_id)
        self.send_json({"cancelled": await self.ctx.hub.cancel_session(sid, agent=self.agent)})


def routes(ctx: Context) -> list[tuple[str, type, dict[str, Any]]]:
    seg = r"([^/]+)"
    return [
        (rf"/v1/sessions/{seg}/questions", QuestionsHandler, {"ctx": ctx}),
        (rf"/v1/sessions/{seg}/questions/{seg}", ResultHandler, {"ctx": ctx}),
        (rf"/v1/sessions/{seg}/questions/{seg}/extend", ExtendHandler, {"ctx": ctx}),
        (rf"/v1/sessions/{seg}/questions/{seg}/answer", AnswerHandler, {"ctx": ctx}),
        (rf"/v1/sessions/{seg}/questions/{seg}/decline", DeclineHandler, {"ctx": ctx}),
        (rf"/v1/sessions/{seg}/questions/{seg}/approve", ApproveHandler, {"ctx": ctx}),
        (rf"/v1/sessions/{seg}/cancel", CancelHandler, {"ctx": ctx}),
    ]
