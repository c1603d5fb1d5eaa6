"""The MCP Tasks extension (``io.modelcontextprotocol/tasks``, the 2026-07-28
revision) on ``askd mcp``: protocol section 22.

A host that declares the extension on a ``tools/call`` of
``ask_user_questions`` or ``request_approval`` gets a task instead of a
blocking call: the question is asked in askd, and the reply is a
``CreateTaskResult`` at once. The task holds no state of its own: its id
names the question (session, request id, whom it waits for, when it was
asked), and every ``tasks/get`` reads the question from askd. So a task
outlives this process, the host and askd's restart, and another agent
token's task is simply not found (askd answers 404).

The SDK (``mcp`` 2.x) has the extension framework (``Extension``,
``MethodBinding``, ``require_client_extension``, the ``tools/call``
interceptor) but not this extension's types or methods; they are here, in
one module, so it can move to the SDK's support once that lands.
"""

from __future__ import annotations

import asyncio
import base64
import math
import time
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, Literal, cast

import anyio
from mcp import types
from mcp.server import Server, ServerRequestContext
from mcp.server.context import CallNext, HandlerResult
from mcp.server.extension import Extension, MethodBinding, compose_tool_call_handler
from mcp.server.mcpserver.server import require_client_extension
from mcp.shared.exceptions import MCPError
from mcp.shared.subscriptions import SUBSCRIPTION_ID_META_KEY
from mcp_types import INTERNAL_ERROR, INVALID_PARAMS, Notification, NotificationParams, RequestParams, Result
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import BaseModel, ConfigDict, Field, StrictStr, TypeAdapter, ValidationError
from pydantic.alias_generators import to_camel

from askd.client import AsyncAgentClient, Discovery
from askd.client import Result as AskdResult
from askd.client.errors import AskdClientError, QuestionLost
from askd.config import ConfigError
from askd.mcp import calls
from askd.mcp.approval import APPROVE, RequestApprovalArgs
from askd.mcp.bridge import Bridge, call_failure
from askd.mcp.calls import HOST_KEY, CallFailed
from askd.mcp.host import declares_form
from askd.mcp.tools import ASK, describe, tool_result
from askd.protocol import codec
from askd.protocol.ids import Id
from askd.protocol.models import AskFields
from askd.protocol.status import Status
from askd.server.logs import get_logger

log = get_logger("askd.mcp")

EXTENSION = "io.modelcontextprotocol/tasks"
POLL_INTERVAL_MS = 5000  # a person answers in minutes: polling every 5 s is plenty
TASK_ID_PREFIX = "askd1."  # the version of the task id's layout
MAX_TASK_ID = 4096
# How long a listen stream's watcher waits on askd before it looks again:
# a change made in this process (a reply through tasks/update) wakes it sooner.
WATCH_SECONDS = 5.0

TaskStatus = Literal["working", "input_required", "completed", "failed", "cancelled"]
TERMINAL: frozenset[str] = frozenset({"completed", "failed", "cancelled"})


# ---- the wire (the extension's schema, 2026-07-28) -------------------------


class TaskParams(RequestParams):
    """``tasks/get`` and ``tasks/cancel``."""

    task_id: StrictStr = Field(alias="taskId", min_length=1, max_length=MAX_TASK_ID)


class UpdateTaskParams(TaskParams):
    """``tasks/update``: replies to the task's ``inputRequests``, by key."""

    input_responses: dict[str, Any] = Field(alias="inputResponses")


class Task(Result):
    """A task as ``tasks/get`` and ``notifications/tasks`` carry it (the
    extension's ``DetailedTask``); ``CreateTaskResult`` is the same shape with
    ``resultType`` ``task``."""

    result_type: str = "complete"
    task_id: str
    status: TaskStatus
    status_message: str | None = None
    created_at: str
    last_updated_at: str
    ttl_ms: int | None
    poll_interval_ms: int | None = None
    input_requests: dict[str, types.ElicitRequest] | None = None
    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None


class TaskNotificationParams(NotificationParams):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="allow")


class TaskNotification(Notification[TaskNotificationParams, Literal["notifications/tasks"]]):
    method: Literal["notifications/tasks"] = "notifications/tasks"
    params: TaskNotificationParams


# ---- the task id -------------------------------------------------------------


class _Ref(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    s: Id  # the session
    r: Id  # askd's request id
    w: StrictStr = Field(min_length=1, max_length=1024)  # whom it waits for, in the tool's words
    c: StrictStr = Field(min_length=1, max_length=64)  # when askd took it (its createdAt)


_REF = TypeAdapter(_Ref)


@dataclass(frozen=True)
class TaskRef:
    """What a task id carries: all a new ``askd mcp`` process needs to find
    the question in askd and to say what the blocking call would have said.
    askd's request id is 128 random bits, so the id cannot be guessed; askd
    checks the agent token on every read, so it is no key by itself."""

    session: str
    request_id: str
    whom: str
    created_at: str

    def encode(self) -> str:
        raw = codec.dumps({"s": self.session, "r": self.request_id, "w": self.whom, "c": self.created_at})
        return TASK_ID_PREFIX + base64.urlsafe_b64encode(raw).decode().rstrip("=")

    @classmethod
    def decode(cls, task_id: str) -> TaskRef:
        """The task id's parts, or ``-32602`` for one askd mcp did not make."""
        try:
            if not task_id.startswith(TASK_ID_PREFIX):
                raise ValueError("prefix")
            body = task_id.removeprefix(TASK_ID_PREFIX)
            ref = _REF.validate_python(codec.loads(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4))))
            _instant(ref.c)
        except (ValueError, TypeError, ValidationError):
            raise MCPError(code=INVALID_PARAMS, message="Failed to retrieve task: Task not found (not a task id of askd mcp)") from None
        return cls(ref.s, ref.r, ref.w, ref.c)


def _instant(text: str) -> float:
    moment = datetime.fromisoformat(text)
    if moment.tzinfo is None:
        raise ValueError("no time zone")
    return moment.timestamp()


def _iso(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _duration(seconds: float) -> str:
    seconds = max(0, math.ceil(seconds))
    if seconds < 60:
        return f"{seconds} s"
    if seconds < 3600:
        return f"{seconds // 60} min {seconds % 60} s"
    return f"{seconds // 3600} h {seconds % 3600 // 60} min"


def _ended_at(result: AskdResult) -> float | None:
    """When the question ended, from its receipt's ``endedAt`` (protocol
    section 16); read for the task's timestamps only, so not verified here."""
    if result.receipt is None:
        return None
    try:
        body = result.receipt.split(".")[1]
        claims = codec.loads(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)))
        return _instant(str(claims["endedAt"]))
    except (ValueError, IndexError, KeyError, TypeError):
        return None


def declared(ctx: ServerRequestContext[Any]) -> bool:
    """Whether this request's client declared the extension (on 2026-07-28,
    in the request's own capabilities)."""
    caps = ctx.session.client_capabilities
    return caps is not None and caps.extensions is not None and EXTENSION in caps.extensions


# ---- the extension -----------------------------------------------------------


class Tasks(Extension):
    """Tasks for ``ask_user_questions`` and ``request_approval``; ``tasks/get``,
    ``tasks/update``, ``tasks/cancel``, and ``notifications/tasks`` on the
    ``subscriptions/listen`` streams that ask for ``taskIds``."""

    identifier = EXTENSION

    def __init__(self, bridge: Bridge) -> None:
        self.bridge = bridge
        # Set (and replaced) when a task changes in this process, so that
        # listen streams tell it without waiting for askd.
        self._changed = asyncio.Event()

    def methods(self) -> Sequence[MethodBinding]:
        return (
            MethodBinding("tasks/get", TaskParams, self.get),
            MethodBinding("tasks/update", UpdateTaskParams, self.update),
            MethodBinding("tasks/cancel", TaskParams, self.cancel),
        )

    def install(self, server: Server[Any]) -> None:
        """What ``MCPServer(extensions=[...])`` does, on the low-level server
        ``askd mcp`` is built on: the methods, the ``tools/call`` interceptor,
        the listen streams, and the capability."""
        for binding in self.methods():
            server.add_request_handler(binding.method, binding.params_type, binding.handler)
        calls_as_tasks = compose_tool_call_handler([self], self.bridge.call_tool)
        server.add_request_handler("tools/call", types.CallToolRequestParams, calls_as_tasks)
        server.add_request_handler("subscriptions/listen", types.SubscriptionsListenRequestParams, self.listen)
        server.extensions[EXTENSION] = self.settings()

    # ---- tools/call ------------------------------------------------------

    async def intercept_tool_call(
        self, params: types.CallToolRequestParams, ctx: ServerRequestContext[Any], call_next: CallNext
    ) -> HandlerResult:
        # A task needs the 2026-07-28 wire (an older one cannot carry a
        # CreateTaskResult) and a client that declared the extension on this call.
        if params.name not in (ASK, APPROVE) or not declared(ctx) or ctx.protocol_version not in MODERN_PROTOCOL_VERSIONS:
            return await call_next(ctx)
        if params.request_state is not None:  # a retry of an InputRequiredResult: the blocking call's own
            return await call_next(ctx)
        arguments = params.arguments or {}
        try:
            found = Discovery(self.bridge.cfg.config)
            checked: AskFields | RequestApprovalArgs
            if params.name == ASK:
                checked = self.bridge.question_args(found, arguments)
            else:
                checked = RequestApprovalArgs.model_validate(arguments)
            async with self.bridge.connect(found) as client:
                if isinstance(checked, RequestApprovalArgs):
                    submitted = await self.bridge.submit_approval(client, checked, arguments)
                else:
                    submitted = await self.bridge.submit_question(client, checked, arguments)
        except Exception as err:  # failed before askd had the question: no task, the blocking call's error
            return call_failure(params.name, err)
        whom = self.bridge.whom(arguments)
        if not submitted.pending:  # an idempotent repeat of a question that has ended: its result now
            self.bridge.delivered_end(submitted.request_id)
            return tool_result(submitted, whom)
        ref = TaskRef(submitted.session_id, submitted.request_id, whom, submitted.created_at or _iso(time.time()))
        # The seed is working: a form for the host shows on the first tasks/get.
        seed = {"result_type": "task", "status": "working", "input_requests": None}
        task = self._task(ref, submitted, ctx).model_copy(update=seed)
        log.info("mcp.task_created", tool=params.name, requestId=ref.request_id)
        return task

    # ---- tasks/get, tasks/update, tasks/cancel ----------------------------

    async def get(self, ctx: ServerRequestContext[Any], params: TaskParams) -> Task:
        require_client_extension(ctx, EXTENSION)
        ref = TaskRef.decode(params.task_id)
        async with self._askd() as client:
            result = await self._read(client, ref)
            return self._task(ref, result, ctx)

    async def update(self, ctx: ServerRequestContext[Any], params: UpdateTaskParams) -> types.EmptyResult:
        require_client_extension(ctx, EXTENSION)
        ref = TaskRef.decode(params.task_id)
        async with self._askd() as client:
            result = await self._read(client, ref)
            reply = params.input_responses.get(HOST_KEY)
            # Replies to keys that are not outstanding are ignored, as the
            # extension says: a key never issued, or one answered already.
            if reply is not None and result.pending and self.bridge.outstanding_form(ref.request_id) is not None:
                try:
                    elicited = types.ElicitResult.model_validate(reply)
                except ValidationError:
                    raise MCPError(
                        code=INVALID_PARAMS,
                        message=f"inputResponses.{HOST_KEY}: not an elicitation result (action accept, decline or cancel)",
                    ) from None
                await self.bridge.hear_host(client, ref.request_id, elicited)
                self._touch()
            else:
                log.info("mcp.task_update_ignored", requestId=ref.request_id, replies=len(params.input_responses))
        return types.EmptyResult(result_type="complete")

    async def cancel(self, ctx: ServerRequestContext[Any], params: TaskParams) -> types.EmptyResult:
        """Withdraw the question (protocol section 5): every tab and link
        closes it. One that had ended keeps its end."""
        require_client_extension(ctx, EXTENSION)
        ref = TaskRef.decode(params.task_id)
        async with self._askd() as client:
            try:
                result = await client.withdraw(ref.session, ref.request_id)
            except QuestionLost:
                raise _not_found() from None
            except AskdClientError as err:
                raise MCPError(code=INTERNAL_ERROR, message=calls.failure(err)) from None
        self.bridge.delivered_end(ref.request_id)
        self._touch()
        log.info("mcp.task_cancelled", requestId=ref.request_id, status=result.status.value)
        return types.EmptyResult(result_type="complete")

    # ---- notifications/tasks -----------------------------------------------

    async def listen(
        self, ctx: ServerRequestContext[Any], params: types.SubscriptionsListenRequestParams
    ) -> types.SubscriptionsListenResult:
        """One ``subscriptions/listen`` stream: acknowledge the ``taskIds``
        askd knows, then send each one's state as it changes, until the host
        closes the stream. askd has no list-changed events: other kinds are
        not acknowledged."""
        if ctx.request_id is None:
            raise MCPError(code=INVALID_PARAMS, message="subscriptions/listen needs a request id")
        requested = (params.notifications.model_extra or {}).get("taskIds")
        if requested is not None:
            require_client_extension(ctx, EXTENSION)
            if not isinstance(requested, list) or not all(isinstance(t, str) for t in requested) or len(requested) > 100:
                raise MCPError(code=INVALID_PARAMS, message="notifications.taskIds: a list of at most 100 task ids")
        meta: dict[str, Any] = {SUBSCRIPTION_ID_META_KEY: ctx.request_id}
        async with self._askd() as client:
            refs: list[TaskRef] = []
            for task_id in dict.fromkeys(requested or []):
                try:
                    ref = TaskRef.decode(task_id)
                    await self._read(client, ref)
                except MCPError:
                    continue  # not a task this token may see: not acknowledged
                refs.append(ref)
            honored = types.SubscriptionFilter.model_validate({"taskIds": [r.encode() for r in refs]} if requested is not None else {})
            await ctx.session.send_notification(
                types.SubscriptionsAcknowledgedNotification(
                    params=types.SubscriptionsAcknowledgedNotificationParams(notifications=honored, meta=meta)
                ),
                related_request_id=ctx.request_id,
            )
            async with anyio.create_task_group() as group:
                for ref in refs:
                    group.start_soon(self._watch, ctx, client, ref, meta)
                await anyio.sleep_forever()  # until the host closes the stream (the SDK cancels this handler)
        return types.SubscriptionsListenResult(meta=meta)

    async def _watch(self, ctx: ServerRequestContext[Any], client: AsyncAgentClient, ref: TaskRef, meta: dict[str, Any]) -> None:
        """Send the task's state whenever it changes, up to its end."""
        last: tuple[str, tuple[str, ...]] | None = None
        while True:
            changed = self._changed
            try:
                result = await self._read(client, ref)
            except MCPError as err:  # askd unreachable for now, or the result dropped
                log.info("mcp.task_watch_failed", requestId=ref.request_id, error=err.error.message)
                if err.error.code == INVALID_PARAMS:
                    return
                await asyncio.sleep(WATCH_SECONDS)
                continue
            task = self._task(ref, result, ctx)
            seen = (task.status, tuple(task.input_requests or ()))
            if seen != last:
                shown = task.model_dump(by_alias=True, mode="json", exclude_none=True, exclude={"result_type"})
                note = TaskNotification(params=TaskNotificationParams.model_validate({**shown, "_meta": meta}))
                # The SDK types send_notification for the core notifications; it sends any model.
                await ctx.session.send_notification(cast(types.ServerNotification, note), related_request_id=ctx.request_id)
                last = seen
            if task.status in TERMINAL:
                return
            waiting = asyncio.ensure_future(client.wait(ref.session, ref.request_id, timeout=WATCH_SECONDS))
            touched = asyncio.ensure_future(changed.wait())
            try:
                await asyncio.wait({waiting, touched}, return_when=asyncio.FIRST_COMPLETED)
            finally:
                for pending in (waiting, touched):
                    pending.cancel()

    # ---- shared ------------------------------------------------------------

    def _touch(self) -> None:
        self._changed.set()
        self._changed = asyncio.Event()

    @asynccontextmanager
    async def _askd(self) -> AsyncIterator[AsyncAgentClient]:
        """The bridge's client, its failures as JSON-RPC errors: a poll that
        cannot reach askd fails, the task does not (poll again)."""
        try:
            async with self.bridge.connect(Discovery(self.bridge.cfg.config)) as client:
                yield client
        except (CallFailed, ConfigError) as err:
            raise MCPError(code=INTERNAL_ERROR, message=calls.failure(err) + " The task is unchanged: poll again.") from None

    async def _read(self, client: AsyncAgentClient, ref: TaskRef) -> AskdResult:
        try:
            return await client.result(ref.session, ref.request_id)
        except QuestionLost:
            raise _not_found() from None
        except AskdClientError as err:
            raise MCPError(code=INTERNAL_ERROR, message=calls.failure(err) + " The task is unchanged: poll again.") from None

    def _task(self, ref: TaskRef, result: AskdResult, ctx: ServerRequestContext[Any]) -> Task:
        """The task as the question stands in askd (and, for the host's form,
        in this process)."""
        now = time.time()
        created = _instant(ref.created_at)
        keep = Discovery(self.bridge.cfg.config).settings.result_ttl_seconds
        base: dict[str, Any] = {"task_id": ref.encode(), "created_at": ref.created_at, "poll_interval_ms": POLL_INTERVAL_MS}
        if result.pending:
            expires = _instant(result.expires_at) if result.expires_at else now
            # Kept while pending and for result_ttl_seconds after: no
            # shorter than the question's time left, as it may be extended.
            ttl = math.ceil((max(expires, now) - created + keep) * 1000)
            doing = "decide" if result.approvals is not None else "answer"
            message = f"Waiting for {ref.whom} to {doing} ({_duration(expires - now)} left)"
            form = self.bridge.outstanding_form(ref.request_id)
            if form is not None and declares_form(ctx.session.client_capabilities):
                return Task(
                    **base, status="input_required", status_message=message + "; they may answer here",
                    last_updated_at=ref.created_at, ttl_ms=ttl, input_requests={HOST_KEY: form.request()},
                )
            return Task(**base, status="working", status_message=message, last_updated_at=ref.created_at, ttl_ms=ttl)
        ended = _ended_at(result) or now
        ttl = math.ceil((ended - created + keep) * 1000)
        self.bridge.delivered_end(ref.request_id)
        text = describe(result, ref.whom)
        if result.status is Status.cancelled:
            return Task(**base, status="cancelled", status_message=text, last_updated_at=_iso(ended), ttl_ms=ttl)
        call = tool_result(result, ref.whom).model_dump(by_alias=True, mode="json", exclude_none=True)
        return Task(**base, status="completed", status_message=text.splitlines()[0], last_updated_at=_iso(ended), ttl_ms=ttl, result=call)


def _not_found() -> MCPError:
    return MCPError(
        code=INVALID_PARAMS, message="Failed to retrieve task: Task not found (unknown to askd for this agent token, or expired)"
    )
