"""The bridge's request handlers: list the tools, run a call, hear a cancel.

A call asks through ``askd.client.AsyncAgentClient`` (retries, re-attach by
``requestId``), waits at most ``--max-wait``, reports progress meanwhile,
and turns every failure into a tool error of one sentence. A host's
``notifications/cancelled`` withdraws the question the call waited for.

Where the host declares form elicitation, the person is asked in the host
too (``askd.mcp.host``): an ``elicitation/create`` request beside the wait,
or, on protocol versions without server requests, an ``InputRequiredResult``
whose retry carries the reply. The first answer anywhere wins.
"""

from __future__ import annotations

import asyncio
import secrets
import time
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
from mcp import types
from mcp.server import ServerRequestContext
from mcp.shared.dispatcher import coerce_request_id
from mcp.shared.exceptions import MCPError
from mcp.shared.jsonrpc_dispatcher import progress_token_from_params
from mcp_types import INVALID_PARAMS, RequestId
from pydantic import ValidationError

from askd.client import AsyncAgentClient, Discovery, Result
from askd.client.errors import AskdClientError, DaemonUnavailable
from askd.config import ConfigError
from askd.mcp import calls
from askd.mcp.approval import APPROVE, RequestApprovalArgs
from askd.mcp.calls import HOST_KEY, CallFailed
from askd.mcp.host import ApprovalForm, HostForm, build_approval_form, build_form, declares_form, input_required_era
from askd.mcp.keys import AskKeys
from askd.mcp.tools import ASK, GET, GetAnswerArgs, invalid_arguments, tool_error, tool_list, tool_result
from askd.protocol import codec
from askd.protocol.models import VIA_HEADER, AskFields
from askd.server.logs import get_logger

log = get_logger("askd.mcp")

PROGRESS_SECONDS = 10.0  # the spec asks for at least one progress notification every 15 s
# After a handler is cancelled, how long to wait for the host's
# notifications/cancelled (the SDK cancels the handler first, then delivers it).
CANCEL_NOTICE_SECONDS = 0.5
WITHDRAW_SECONDS = 10.0  # a withdraw that takes longer is given up (and logged)


@dataclass(frozen=True)
class BridgeConfig:
    user: str
    session: str
    url: str | None = None
    token: str | None = None
    config: Path | None = None
    max_wait: float | None = None
    progress_seconds: float = PROGRESS_SECONDS
    elicit: bool = True  # --no-elicit: never ask in the host itself


def call_failure(tool: str, err: Exception) -> types.CallToolResult:
    """The tool error of a call that failed: bad arguments, askd refusing or
    unreachable, or a bug (said so; the bridge keeps serving)."""
    if isinstance(err, ValidationError):
        log.info("mcp.bad_arguments", tool=tool, fields=[".".join(map(str, e["loc"])) for e in err.errors()])
        return tool_error(invalid_arguments(tool, err))
    if isinstance(err, (AskdClientError, ConfigError, CallFailed)):
        log.warning("mcp.call_failed", tool=tool, error=type(err).__name__, message=str(err))
        return tool_error(calls.failure(err))
    log.error("mcp.call_crashed", tool=tool, exc_info=(type(err), err, err.__traceback__))
    return tool_error(f"askd mcp failed unexpectedly ({type(err).__name__}: {err}); see its log on stderr.")


class Bridge:
    def __init__(self, cfg: BridgeConfig) -> None:
        self.cfg = cfg
        self.keys = AskKeys()
        # In-flight calls by MCP request id, set when the host cancels one.
        self._cancels: dict[RequestId, anyio.Event] = {}
        # The host as a channel: questions it may still be asked (by
        # requestId), those it has replied to (never asked again), and those
        # whose dialog is open now.
        self._forms: dict[str, HostForm | ApprovalForm] = {}
        self._replied: set[str] = set()
        self._open: set[str] = set()
        # This process's hostKey (protocol section 5): sent with the asks the
        # host may be asked in and with what the person answers there, so
        # that only this process passes on an answer for its person.
        self.host_key = secrets.token_urlsafe(32)

    # ---- handlers ------------------------------------------------------

    async def list_tools(self, ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        try:
            limit = Discovery(self.cfg.config).settings.limits.max_questions
        except ConfigError:
            limit = 20  # the call itself reports the bad configuration
        return types.ListToolsResult(tools=tool_list(limit))

    async def call_tool(
        self, ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult | types.InputRequiredResult:
        if params.name not in (ASK, GET, APPROVE):
            raise MCPError(code=INVALID_PARAMS, message=f"Unknown tool: {params.name}")
        arguments = params.arguments or {}
        call_id = coerce_request_id(ctx.request_id) if ctx.request_id is not None else None
        if call_id is not None:
            self._cancels[call_id] = anyio.Event()
        started = time.monotonic()
        try:
            if params.name == ASK:
                result = await self._ask(ctx, arguments, params)
            elif params.name == APPROVE:
                result = await self._request_approval(ctx, arguments, params)
            else:
                result = await self._get_answer(ctx, arguments, params)
        except Exception as err:
            return call_failure(params.name, err)
        finally:
            if call_id is not None:
                self._cancels.pop(call_id, None)
        if isinstance(result, types.InputRequiredResult):
            log.info("mcp.host_asked", tool=params.name, era="input_required")
            return result
        log.info(
            "mcp.call",
            tool=params.name,
            requestId=result.request_id,
            status=result.status.value,
            seconds=round(time.monotonic() - started, 3),
        )
        return tool_result(result, self.whom(arguments) if params.name != GET else self.cfg.user)

    def whom(self, arguments: Mapping[str, Any]) -> str:
        """Whom an ask waits for, in words: its ``to`` (or an approval's
        ``userId``), else the bridge's user."""
        to, user = arguments.get("to"), arguments.get("userId")
        if isinstance(to, list) and to:
            return ", ".join(map(str, to))
        return user if isinstance(user, str) and user else self.cfg.user

    async def on_cancelled(self, ctx: ServerRequestContext[Any], params: types.CancelledNotificationParams) -> None:
        if params.request_id is None:
            return
        event = self._cancels.get(coerce_request_id(params.request_id))
        if event is not None:
            event.set()

    # ---- the tools -----------------------------------------------------

    async def _ask(
        self, ctx: ServerRequestContext[Any], arguments: Mapping[str, Any], params: types.CallToolRequestParams
    ) -> Result | types.InputRequiredResult:
        found = Discovery(self.cfg.config)
        args = self.question_args(found, arguments)
        async with self.connect(found) as client:
            resumed = calls.resumed(params)
            if resumed is not None:  # the host's retry with the person's reply
                await self.hear_host(client, resumed, calls.host_reply(params))
                return await self._wait(ctx, client, resumed, self.cfg.max_wait, self.whom(arguments))
            submitted = await self.submit_question(client, args, arguments)
            if not submitted.pending:
                return submitted
            return await self._wait(ctx, client, submitted.request_id, self.cfg.max_wait, self.whom(arguments))

    @staticmethod
    def question_args(found: Discovery, arguments: Mapping[str, Any]) -> AskFields:
        """``ask_user_questions``'s arguments checked, with the configured limits."""
        limits = {"max_questions": found.settings.limits.max_questions, "max_timeout": found.settings.max_timeout_seconds}
        return AskFields.model_validate(arguments, context=limits)

    async def submit_question(self, client: AsyncAgentClient, args: AskFields, arguments: Mapping[str, Any]) -> Result:
        """Ask ``ask_user_questions``'s question in askd without waiting: the
        blocking call then waits on it, a task (protocol section 22) returns."""
        key = self.keys.for_call(ASK, arguments)
        to, escalate = args.audience()
        # Only a question asked of the bridge's own user is theirs to answer in the host.
        in_host = not to and self.cfg.elicit
        submitted = await client.submit(
            self.cfg.session,
            None if to else self.cfg.user,  # to: whom the tool names instead of the bridge's user
            arguments["questions"],  # sent as given: unknown fields pass through
            metadata=args.metadata,
            timeout=args.timeoutSeconds,
            idempotency_key=self.keys.header(key),
            max_extension=args.maxExtensionSeconds,
            on_timeout=arguments["onTimeout"]["answers"] if args.onTimeout is not None else None,
            to=to,
            escalate=escalate,
            remind=(args.remind.everySeconds, args.remind.times) if args.remind is not None else None,
            host_key=self.host_key if in_host else None,
        )
        self.keys.asked(submitted.request_id, key)
        if not submitted.pending:
            self.keys.ended(submitted.request_id)
        elif in_host and submitted.request_id not in self._replied:
            self._forms.setdefault(submitted.request_id, build_form(arguments["questions"]))
        return submitted

    async def _request_approval(
        self, ctx: ServerRequestContext[Any], arguments: Mapping[str, Any], params: types.CallToolRequestParams
    ) -> Result | types.InputRequiredResult:
        """``request_approval``: ask as ``_ask`` does, with ``action``; the
        host's form is Approve / Deny when the bridge's own user is asked."""
        args = RequestApprovalArgs.model_validate(arguments)
        async with self.connect(Discovery(self.cfg.config)) as client:
            resumed = calls.resumed(params)
            if resumed is not None:
                await self.hear_host(client, resumed, calls.host_reply(params))
                return await self._wait(ctx, client, resumed, self.cfg.max_wait, self.whom(arguments))
            submitted = await self.submit_approval(client, args, arguments)
            if not submitted.pending:
                return submitted
            return await self._wait(ctx, client, submitted.request_id, self.cfg.max_wait, self.whom(arguments))

    async def submit_approval(self, client: AsyncAgentClient, args: RequestApprovalArgs, arguments: Mapping[str, Any]) -> Result:
        """Ask ``request_approval``'s approval in askd without waiting."""
        key = self.keys.for_call(APPROVE, arguments)
        user = args.userId if args.to is None else None
        in_host = args.to is None and (args.userId is None or args.userId == self.cfg.user) and self.cfg.elicit
        submitted = await client.request_approval(
            self.cfg.session, args.name, args.arguments, summary=args.summary, preview=args.preview,
            to=args.to, user=user or (None if args.to else self.cfg.user), timeout=args.timeoutSeconds,
            idempotency_key=self.keys.header(key), wait=False, host_key=self.host_key if in_host else None,
        )
        self.keys.asked(submitted.request_id, key)
        if not submitted.pending:
            self.keys.ended(submitted.request_id)
        elif in_host and submitted.request_id not in self._replied:
            self._forms.setdefault(submitted.request_id, build_approval_form(args.action()))
        return submitted

    async def _get_answer(
        self, ctx: ServerRequestContext[Any], arguments: Mapping[str, Any], params: types.CallToolRequestParams
    ) -> Result | types.InputRequiredResult:
        args = GetAnswerArgs.model_validate(arguments)
        limit = args.waitSeconds
        if self.cfg.max_wait is not None:
            limit = self.cfg.max_wait if limit is None else min(limit, self.cfg.max_wait)
        async with self.connect(Discovery(self.cfg.config)) as client:
            resumed = calls.resumed(params)
            if resumed is not None:
                await self.hear_host(client, resumed, calls.host_reply(params))
            return await self._wait(ctx, client, args.requestId, limit)

    # ---- waiting -------------------------------------------------------

    @asynccontextmanager
    async def connect(self, found: Discovery) -> AsyncIterator[AsyncAgentClient]:
        """A client for this call, the daemon checked once without retries:
        one that is not there fails the call now, in one clear sentence;
        once the call waits, outages are ridden through. Found again for
        every call, so a daemon started after the bridge is reached."""
        # Askd-Via: the trail records its asks as made through askd mcp.
        client = AsyncAgentClient(found.url(self.cfg.url), found.agent_token(self.cfg.token), headers={VIA_HEADER: "mcp"})
        try:
            try:
                await client.health()
            except DaemonUnavailable as err:
                where = calls.where(found, self.cfg.url)
                raise CallFailed(f"askd is not running at {err.url} ({err.reason}; {where}): start it with `askd serve`") from None
            yield client
        finally:
            with anyio.CancelScope(shield=True):
                await client.aclose()

    async def _wait(
        self, ctx: ServerRequestContext[Any], client: AsyncAgentClient, request_id: str, limit: float | None, whom: str | None = None
    ) -> Result | types.InputRequiredResult:
        """Wait until the question ends or ``limit`` seconds pass, reporting
        progress and asking in the host meanwhile; a host cancel withdraws
        the question."""
        form = self._host_form(ctx, request_id)
        if form is not None and not ctx.session.can_send_request:
            # No server requests in this era: the host asks, then calls again with the reply.
            return types.InputRequiredResult(
                input_requests={HOST_KEY: form.request()}, request_state=codec.dumps({"requestId": request_id}).decode()
            )
        # Plain tasks, not a task group: a group would wrap the wait's own
        # errors (DaemonUnavailable, QuestionLost) in an ExceptionGroup.
        who = whom or self.cfg.user
        ticker = asyncio.create_task(self._report_progress(ctx, who)) if progress_token_from_params(ctx.params) is not None else None
        waiting = asyncio.create_task(client.wait(self.cfg.session, request_id, timeout=limit))
        withdraw = anyio.CancelScope()  # an anyio cancel, so the SDK's shielded courtesy cancel goes out
        dialog = asyncio.create_task(self._dialog(ctx, request_id, form, withdraw)) if form is not None else None
        try:
            if dialog is not None:
                await asyncio.wait({waiting, dialog}, return_when=asyncio.FIRST_COMPLETED)
                if dialog.done() and not waiting.done():
                    # The person replied in the host while the question was open there.
                    await self.hear_host(client, request_id, dialog.result(), form)
            result = await waiting
        except anyio.get_cancelled_exc_class():
            with anyio.CancelScope(shield=True):
                await self._withdraw_if_host_cancelled(ctx, client, request_id)
            raise
        finally:
            # The question ended elsewhere (or the call stops waiting): the
            # host's dialog is withdrawn (the SDK sends notifications/cancelled).
            withdraw.cancel()
            for task in (ticker, waiting):
                if task is not None and not task.done():
                    task.cancel()
        if not result.pending:  # nothing to ask in the host any more
            self.delivered_end(request_id)
        return result

    def _host_form(self, ctx: ServerRequestContext[Any], request_id: str) -> HostForm | None:
        """The form to show in the host now, if the host takes forms, has
        not replied about this question and has no dialog open for it."""
        form = self._forms.get(request_id)
        if form is None or request_id in self._open or not declares_form(ctx.session.client_capabilities):
            return None
        if not ctx.session.can_send_request and not input_required_era(ctx.session.protocol_version):
            return None  # a connection that takes no server requests of an era that needs them
        return form

    async def _dialog(
        self, ctx: ServerRequestContext[Any], request_id: str, form: HostForm, withdraw: anyio.CancelScope
    ) -> types.ElicitResult | None:
        """Ask in the host (``elicitation/create``, tied to the tool call);
        None when the host failed to (it is not asked again) or the bridge
        withdrew the dialog."""
        self._open.add(request_id)
        try:
            with withdraw:
                log.info("mcp.host_asked", requestId=request_id, era="elicitation/create")
                return await ctx.session.elicit_form(form.message, form.schema, related_request_id=ctx.request_id)
            log.info("mcp.host_withdrawn", requestId=request_id)
            return None
        except Exception as err:  # an error reply, a malformed one, the host gone: the wait goes on
            log.warning("mcp.host_ask_failed", requestId=request_id, error=f"{type(err).__name__}: {err}")
            return None
        finally:
            self._open.discard(request_id)

    async def hear_host(
        self, client: AsyncAgentClient, request_id: str, reply: types.ElicitResult | None, form: HostForm | ApprovalForm | None = None
    ) -> None:
        """Take the person's reply in the host to askd: accept answers,
        decline declines, cancel (or nothing usable) leaves the question to
        the other channels. Either way the host is not asked again about it.
        A reply that comes after the question ended changes nothing."""
        form = self._forms.pop(request_id, None) or form
        if form is None or request_id in self._replied:
            log.info("mcp.host_reply_ignored", requestId=request_id, reason="not asked, or replied already")
            return
        self._replied.add(request_id)
        if isinstance(form, ApprovalForm):
            await self._hear_approval(client, request_id, reply, form)
            return
        action = reply.action if reply is not None else "failed"
        answers = form.answers(reply.content) if reply is not None and reply.action == "accept" else {}
        try:
            if action == "decline":
                taken = await client.decline_for(self.cfg.session, request_id, self.cfg.user, host_key=self.host_key)
            elif answers:
                taken = await client.answer_for(self.cfg.session, request_id, self.cfg.user, answers, host_key=self.host_key)
            else:  # dismissed, or accepted with nothing filled in
                log.info("mcp.host_dismissed", requestId=request_id, action=action)
                return
        except AskdClientError as err:  # the wait goes on and reports what askd says
            log.warning("mcp.host_reply_refused", requestId=request_id, action=action, error=str(err))
            return
        log.info("mcp.host_replied", requestId=request_id, action=action, taken=taken is not None)

    async def _hear_approval(
        self, client: AsyncAgentClient, request_id: str, reply: types.ElicitResult | None, form: ApprovalForm
    ) -> None:
        """Approve or deny in askd for the bridge's user, as they chose in the host."""
        decision = form.decision(reply)
        try:
            if decision is None:  # dismissed, or nothing chosen: the other channels decide
                log.info("mcp.host_dismissed", requestId=request_id, action=reply.action if reply else "failed")
                return
            if decision[0] == "approve":
                taken = await client.approve_for(self.cfg.session, request_id, self.cfg.user, host_key=self.host_key)
            else:
                taken = await client.decline_for(self.cfg.session, request_id, self.cfg.user, decision[1], host_key=self.host_key)
        except AskdClientError as err:  # already voted, and the like: the wait reports what askd says
            log.warning("mcp.host_reply_refused", requestId=request_id, action=decision[0], error=str(err))
            return
        log.info("mcp.host_replied", requestId=request_id, action=decision[0], taken=taken is not None)

    def outstanding_form(self, request_id: str) -> HostForm | ApprovalForm | None:
        """The form the host may still be asked with for this question: this
        process asked it of its own user and the host has not replied yet."""
        return None if request_id in self._replied else self._forms.get(request_id)

    def delivered_end(self, request_id: str) -> None:
        """A call or a task delivered the question's end: the same arguments
        ask anew, and the host is not asked about it any more."""
        self.keys.ended(request_id)
        self._forms.pop(request_id, None)
        self._replied.discard(request_id)

    async def _report_progress(self, ctx: ServerRequestContext[Any], whom: str) -> None:
        started = time.monotonic()
        try:
            while True:
                await asyncio.sleep(self.cfg.progress_seconds)
                waited = time.monotonic() - started
                await ctx.session.report_progress(waited, message=f"Waiting for {whom} to answer ({waited:.0f} s)")
        except Exception as err:  # the host went away: the wait itself will notice
            log.debug("mcp.progress_stopped", error=repr(err))

    async def _withdraw_if_host_cancelled(self, ctx: ServerRequestContext[Any], client: AsyncAgentClient, request_id: str) -> None:
        """Withdraw only for the host's cancel: a bridge that stops (its
        stdin closed) leaves the question open for a later get_answer."""
        event = self._cancels.get(coerce_request_id(ctx.request_id)) if ctx.request_id is not None else None
        if event is None:
            return
        with anyio.move_on_after(CANCEL_NOTICE_SECONDS):
            await event.wait()
        if not event.is_set():
            return
        with anyio.move_on_after(WITHDRAW_SECONDS) as scope:
            try:
                result = await client.withdraw(self.cfg.session, request_id)
            except AskdClientError as err:
                log.warning("mcp.withdraw_failed", requestId=request_id, error=str(err))
                return
        if scope.cancelled_caught:
            log.warning("mcp.withdraw_failed", requestId=request_id, error=f"no answer in {WITHDRAW_SECONDS:g} s")
            return
        self.keys.ended(request_id)
        log.info("mcp.withdrawn", requestId=request_id, status=result.status.value)
