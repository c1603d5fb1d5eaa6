"""What every framework adapter shares (protocol section 21): a paused tool
call becomes an approval (section 17), asked once whatever happens to the
agent's process, and its end becomes one small typed decision that the
adapter turns into the framework's own types.

- :class:`ToolCall` is the call as the framework gave it; the action asked
  is its name, its arguments, the tool's JSON Schema where there is one,
  ``editable`` where the framework takes changed arguments, and a summary
  naming the agent and the tool.
- :func:`call_key` is the ``Idempotency-Key``: made from the framework, the
  session and the framework's own id of the call, so an agent process that
  dies and asks again gets the same question and, in time, the same decision.
- :class:`ApprovalGate` (blocking) and :class:`AsyncApprovalGate` ask
  *inline* (:meth:`~ApprovalGate.decide`: wait through dropped links and
  askd restarts, as the client does) or *deferred* (:meth:`~ApprovalGate.ask`
  now, :meth:`~ApprovalGate.collect` later, from any process).
- The decision is :class:`Approved` (the final arguments, whether the
  person edited them, the scope) or :class:`Denied` (the message the model
  sees); :class:`Pending` while nobody has decided. Silence is never
  consent: a timeout, a cancel or a withdrawal is a denial saying so.
- Before an approval lets a call run, its receipt is verified (section 16):
  the signature against the daemon's JWKS, fetched through the client, and
  the digest of exactly the action about to run. A receipt that does not
  hold is a denial naming why. Only ``verify_receipts=False`` turns it off.

Everything reaches askd through :mod:`askd.client`; no framework is imported.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal, Self, TypedDict, Unpack

from askd.client import AgentClient, ApiError, AsyncAgentClient, Result, Status
from askd.protocol import codec
from askd.protocol.action import MAX_SUMMARY, Scope
from askd.receipts import ReceiptError, verify

__all__ = [
    "ApprovalGate",
    "AsyncGated",
    "Approved",
    "AsyncApprovalGate",
    "Decision",
    "Denied",
    "GateOptions",
    "Outcome",
    "Pending",
    "ToolCall",
    "call_key",
    "denial_message",
    "outcome_of",
    "receipt_refusal",
    "settle",
]

#: How a call ended up not approved: askd's ends; ``refused`` when the
#: adapter would not run it (its receipt did not verify); ``invalid`` when
#: askd would not ask, the call's arguments not fitting the tool's schema.
DenialKind = Literal["declined", "timeout", "cancelled", "withdrawn", "refused", "invalid"]

# askd's error text for a question its agent withdrew (protocol section 1).
WITHDRAWN_ERROR = "Withdrawn by agent"


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One tool call a framework paused for approval. ``call_id`` is the
    framework's own id of it (a tool call id, an interruption's id);
    ``agent`` names the agent that made it, when the framework says (else
    the gate's ``agent``)."""

    call_id: str
    name: str
    arguments: Mapping[str, Any]
    schema: Mapping[str, Any] | None = None
    description: str | None = None
    agent: str | None = None
    # Whether this call takes changed arguments, where the framework says so
    # per tool (LangChain's allowed decisions); None: the gate's ``editable``.
    editable: bool | None = None


@dataclass(frozen=True, slots=True)
class Approved:
    """Approved: run ``arguments`` (the person's edit when ``edited``).
    ``scope`` ``always`` when the person chose *Approve always*."""

    arguments: dict[str, Any]
    edited: bool
    scope: Scope
    by: str | None
    request_id: str
    receipt: str | None


@dataclass(frozen=True, slots=True)
class Denied:
    """Not approved: ``message`` is what the model is told,
    ``"<who> denied it: <reason>"`` or the end's reason. ``request_id`` is
    None only for a call askd would not ask (``invalid``)."""

    message: str
    kind: DenialKind
    request_id: str | None
    by: str | None = None
    reason: str | None = None


@dataclass(frozen=True, slots=True)
class Pending:
    """Asked, not yet decided (deferred mode): collect it later."""

    request_id: str
    expires_at: str | None = None


Decision = Approved | Denied
Outcome = Approved | Denied | Pending


def call_key(framework: str, session: str, call_id: str) -> str:
    """The ``Idempotency-Key`` of one call: the same framework, session and
    call id give the same key, so asking again (a restarted process, a
    deferred collect) returns the same question (protocol sections 5 and
    21). Hashed, so it fits the header's 256 characters whatever the ids."""
    material = codec.dumps([framework, session, call_id])
    return f"{framework}-{hashlib.sha256(material).hexdigest()}"


def summary_of(call: ToolCall, agent: str) -> str:
    """The action's summary: who wants to run what, and the tool's own words."""
    head = f"**{agent}** wants to run the tool `{call.name}`."
    if not call.description:
        return head
    text = f"{head}\n\n{call.description.strip()}"
    return text if len(text) <= MAX_SUMMARY else text[: MAX_SUMMARY - 1] + "…"


def denial_message(result: Result) -> str:
    """What the model hears when ``result`` is not an approval: who denied
    it and why, or why it ended without anyone deciding."""
    if result.status is Status.declined:
        return f"{result.answered_by or 'The approver'} denied it: {result.reason or 'no reason given'}"
    if result.status is Status.timeout:
        return f"Not approved: nobody decided in time ({result.error or 'timed out'})"
    if result.status is Status.cancelled:
        return f"Not approved: {result.error or 'cancelled'}"
    return "Not approved: askd's answer is not an approval"


def outcome_of(result: Result) -> Outcome:
    """The decision ``result`` holds, before any receipt is checked."""
    if result.pending:
        return Pending(result.request_id, result.expires_at)
    if result.status is Status.answered and result.approved is True and result.arguments is not None:
        return Approved(
            arguments=dict(result.arguments),
            edited=bool(result.edited),
            scope=result.scope or "once",
            by=result.answered_by,
            request_id=result.request_id,
            receipt=result.receipt,
        )
    kind: DenialKind
    if result.status is Status.declined:
        kind = "declined"
    elif result.status is Status.timeout:
        kind = "timeout"
    elif result.status is Status.cancelled:
        kind = "withdrawn" if result.error == WITHDRAWN_ERROR else "cancelled"
    else:
        kind = "refused"
    return Denied(denial_message(result), kind, result.request_id, result.answered_by, result.reason)


def receipt_refusal(result: Result, name: str, jwks: Mapping[str, Any]) -> str | None:
    """Why ``result``'s receipt does not let ``name`` run with the result's
    final arguments, or None when it does (protocol section 16: the
    signature, approved, the digest of this exact action and scope, and that
    it is this request's receipt)."""
    if not result.receipt:
        return "the result carries no receipt"
    try:
        claims = verify(result.receipt, jwks, action={"name": name, "arguments": result.arguments})
    except ReceiptError as err:
        return str(err)
    if claims.get("sid") != result.session_id or claims.get("rid") != result.request_id:
        return "the receipt is for another request"
    return None


def _refused(call: ToolCall, result: Result, why: str) -> Denied:
    message = f"askd's receipt does not verify, so {call.name} was not run: {why}"
    return Denied(message, "refused", result.request_id, result.answered_by)


def _not_asked(err: ApiError) -> Denied | None:
    """A call askd would not ask because its arguments do not fit the tool's
    schema (``400``, ``loc`` ``action.arguments...``): a denial the model can
    correct. None for any other error, which is raised."""
    details = err.details if isinstance(err.details, list) else []
    if err.status != 400 or not any(str(d.get("loc", "")).startswith("action.arguments") for d in details if isinstance(d, dict)):
        return None
    return Denied(f"Not asked: the arguments do not fit the tool's schema: {err.message}", "invalid", None)


def settle(call: ToolCall, result: Result, refusal: str | None, editable: bool) -> Outcome:
    """The decision ``result`` holds for ``call``, given ``refusal``: why
    its receipt does not verify (:func:`receipt_refusal`), None when it
    does or receipts are not checked. What runs is what the receipt signs:
    ``edited`` is whether those arguments differ from the call's own, and
    where the call could not be edited (``editable`` false: the framework
    runs the call's own arguments) an approval of any other is refused."""
    outcome = outcome_of(result)
    if not isinstance(outcome, Approved):
        return outcome
    if refusal is not None:
        return _refused(call, result, refusal)
    edited = outcome.arguments != dict(call.arguments)
    if edited and not editable:
        message = f"{call.name} was not run: askd approved other arguments than the call's, which this framework cannot change"
        return Denied(message, "refused", result.request_id, result.answered_by)
    return replace(outcome, edited=edited)


def _checked(asking: _Asking, result: Result) -> bool:
    """Whether ``result``'s receipt is checked before its call runs: an
    approval, with receipt checks on."""
    return asking.verify_receipts and result.approved is True


def _unknown_kid(why: str | None) -> bool:
    return why is not None and why.startswith("unknown kid")


class GateOptions(TypedDict, total=False):
    """Whom and how to ask, the keywords every gate and adapter takes:
    ``agent`` names the agent in the summary (when the framework does not);
    ``user`` or ``to`` (users and ``group:NAME``) whom to ask; ``quorum``,
    ``timeout`` (seconds), ``parent_session`` and ``metadata`` go into every
    ask; ``editable``: the person may change the arguments (the adapter
    says whether its framework takes them; never with a quorum above 1);
    ``allow_always``: offer
    *Approve always*; ``verify_receipts`` (default true): refuse a call
    whose receipt does not verify; ``options``: further keywords of
    ``AgentClient.request_approval`` (``escalate``, ``remind``, ...)."""

    agent: str
    user: str | None
    to: Sequence[str] | None
    quorum: int | None
    timeout: float | None
    editable: bool
    allow_always: bool
    verify_receipts: bool
    metadata: Mapping[str, Any] | None
    parent_session: str | None
    options: Mapping[str, Any] | None


@dataclass(kw_only=True)
class _Asking:
    """Whom and how to ask, the same for every call of one gate."""

    session: str
    framework: str
    agent: str = "agent"
    user: str | None = None
    to: Sequence[str] | None = None
    quorum: int | None = None
    timeout: float | None = None
    editable: bool = True
    allow_always: bool = False
    verify_receipts: bool = True
    metadata: Mapping[str, Any] | None = None
    parent_session: str | None = None
    options: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def of(cls, session: str, framework: str, asking: GateOptions) -> _Asking:
        settings: dict[str, Any] = {**asking, "options": dict(asking.get("options") or {})}
        return cls(session=session, framework=framework, **settings)

    def editable_for(self, call: ToolCall) -> bool:
        """Whether the person may change ``call``'s arguments: its own say,
        else the gate's; never on a quorum above 1, where each approver
        approves the same arguments (protocol section 17)."""
        if self.quorum is not None and self.quorum > 1:
            return False
        return self.editable if call.editable is None else call.editable

    def request(self, call: ToolCall) -> dict[str, Any]:
        """``request_approval``'s keywords for ``call`` (past session, name, arguments)."""
        agent = call.agent or self.agent
        metadata = {**(self.metadata or {}), "framework": self.framework, "agent": agent, "toolCallId": call.call_id}
        return {
            "idempotency_key": call_key(self.framework, self.session, call.call_id),
            "summary": summary_of(call, agent),
            "schema": dict(call.schema) if call.schema is not None else None,
            "editable": self.editable_for(call),
            "allow_always": self.allow_always,
            "quorum": self.quorum,
            "user": self.user,
            "to": list(self.to) if self.to is not None else None,
            "timeout": self.timeout,
            "metadata": metadata,
            "parent_session": self.parent_session,
            **self.options,
        }


class ApprovalGate:
    """Asks askd to approve the tool calls of one session, blocking.
    ``framework`` names the adapter (it is part of every call's key);
    :class:`GateOptions` says whom and how to ask. ``client``: an
    ``AgentClient`` of yours (default: one found as every askd client finds
    askd, closed with the gate)."""

    def __init__(
        self, *, session: str, framework: str, client: AgentClient | None = None, **asking: Unpack[GateOptions]
    ) -> None:
        self.asking = _Asking.of(session, framework, asking)
        self._own_client = client is None
        self.client = client if client is not None else AgentClient()
        self._jwks: dict[str, Any] | None = None

    def __enter__(self) -> ApprovalGate:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if self._own_client:
            self.client.close()

    def decide(self, call: ToolCall) -> Decision:
        """Inline: ask (or find the same question again) and wait until it ends."""
        result = self._request(call, wait=True)
        decision = self._settle(call, result)
        assert not isinstance(decision, Pending), "a waited-on approval has ended"
        return decision

    def ask(self, call: ToolCall) -> Outcome:
        """Deferred: ask and return at once (``Pending``, or the decision when
        the same call was already decided)."""
        return self._settle(call, self._request(call, wait=False))

    def collect(self, call: ToolCall, wait: float | None = 0.0) -> Outcome:
        """The decision on ``call``, from any process: ``wait`` 0 reports it
        pending, N waits up to N seconds, None waits until it ends. A call
        never asked is asked now (the same key: still one question)."""
        result = self._request(call, wait=False)
        if isinstance(result, Result) and result.pending and (wait is None or wait > 0):
            result = self.client.wait(self.asking.session, result.request_id, wait)
        return self._settle(call, result)

    def _request(self, call: ToolCall, wait: bool) -> Result | Denied:
        try:
            return self.client.request_approval(
                self.asking.session, call.name, call.arguments, wait=wait, **self.asking.request(call)
            )
        except ApiError as err:
            denied = _not_asked(err)
            if denied is None:
                raise
            return denied

    def _settle(self, call: ToolCall, result: Result | Denied) -> Outcome:
        if isinstance(result, Denied):
            return result
        refusal = None
        if _checked(self.asking, result):
            refusal = receipt_refusal(result, call.name, self._keys())
            if _unknown_kid(refusal):  # a key newer than the copy kept: fetch once more
                refusal = receipt_refusal(result, call.name, self._keys(fresh=True))
        return settle(call, result, refusal, self.asking.editable_for(call))

    def _keys(self, fresh: bool = False) -> dict[str, Any]:
        if self._jwks is None or fresh:
            self._jwks = self.client.jwks()
        return self._jwks


class AsyncApprovalGate:
    """:class:`ApprovalGate` for asyncio (``client``: an ``AsyncAgentClient``);
    the same parameters and methods, awaited."""

    def __init__(
        self, *, session: str, framework: str, client: AsyncAgentClient | None = None, **asking: Unpack[GateOptions]
    ) -> None:
        self.asking = _Asking.of(session, framework, asking)
        self._own_client = client is None
        self.client = client if client is not None else AsyncAgentClient()
        self._jwks: dict[str, Any] | None = None

    async def __aenter__(self) -> AsyncApprovalGate:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        if self._own_client:
            await self.client.aclose()

    async def decide(self, call: ToolCall) -> Decision:
        """See :meth:`ApprovalGate.decide`."""
        result = await self._request(call, wait=True)
        decision = await self._settle(call, result)
        assert not isinstance(decision, Pending), "a waited-on approval has ended"
        return decision

    async def ask(self, call: ToolCall) -> Outcome:
        """See :meth:`ApprovalGate.ask`."""
        return await self._settle(call, await self._request(call, wait=False))

    async def collect(self, call: ToolCall, wait: float | None = 0.0) -> Outcome:
        """See :meth:`ApprovalGate.collect`."""
        result = await self._request(call, wait=False)
        if isinstance(result, Result) and result.pending and (wait is None or wait > 0):
            result = await self.client.wait(self.asking.session, result.request_id, wait)
        return await self._settle(call, result)

    async def _request(self, call: ToolCall, wait: bool) -> Result | Denied:
        try:
            return await self.client.request_approval(
                self.asking.session, call.name, call.arguments, wait=wait, **self.asking.request(call)
            )
        except ApiError as err:
            denied = _not_asked(err)
            if denied is None:
                raise
            return denied

    async def _settle(self, call: ToolCall, result: Result | Denied) -> Outcome:
        if isinstance(result, Denied):
            return result
        refusal = None
        if _checked(self.asking, result):
            refusal = receipt_refusal(result, call.name, await self._keys())
            if _unknown_kid(refusal):  # a key newer than the copy kept: fetch once more
                refusal = receipt_refusal(result, call.name, await self._keys(fresh=True))
        return settle(call, result, refusal, self.asking.editable_for(call))

    async def _keys(self, fresh: bool = False) -> dict[str, Any]:
        if self._jwks is None or fresh:
            self._jwks = await self.client.jwks()
        return self._jwks


class AsyncGated:
    """What an asyncio adapter that owns an :class:`AsyncApprovalGate` is as
    a context manager: ``async with`` closes the gate (and the client it
    made)."""

    gate: AsyncApprovalGate

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self.gate.aclose()
