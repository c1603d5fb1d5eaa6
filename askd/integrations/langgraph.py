"""LangGraph and LangChain: askd answers a graph's interrupts (protocol
section 21). Install with ``askd[langgraph]``.

A LangGraph graph pauses with ``interrupt(value)``; its checkpointer keeps
the run, and ``Command(resume=...)`` continues it. LangChain's
``HumanInTheLoopMiddleware`` pauses an agent's tool calls that way, in one
of two shapes:

- ``batched`` (its default): one interrupt per model turn whose value is a
  ``HITLRequest`` (``action_requests`` with their ``review_configs``),
  resumed with ``{"decisions": [...]}``, one decision per action, in order;
- ``per_call``: one interrupt per gated call whose value is a
  ``ToolApprovalRequest`` (``type`` ``tool_approval``, ``tool_call_id``),
  resumed with one decision.

Each gated tool call is asked as an approval (section 17): the action is the
call (the tool's JSON Schema from ``tools``, so an edit is checked against
it; ``editable`` when the tool allows ``edit``). The decision comes back in
the middleware's own shape: ``approve``, ``edit`` with ``edited_action``
when the person changed the arguments, ``reject`` with ``message``
(``"<who> denied it: <reason>"``, or why it ended undecided: a timeout, a
cancel, a receipt that does not verify). A tool whose only decision is
``respond`` (an "ask the user" tool) is asked as a question, and the answer
is the ``respond`` message. Any other interrupt is a free-form question:
a string, one question object (``{"question", "options"?, ...}``, section
4), or ``{"questions": [...]}``; the resume value is the answer (one
question) or the answers by question text (several).

:class:`AskdInterrupts` blocks (``invoke``); :class:`AsyncAskdInterrupts`
is the same for asyncio (``ainvoke``), each method awaited.

Two modes. *Inline* (:meth:`AskdInterrupts.invoke`, :meth:`~AskdInterrupts.resume`):
run the graph and answer every interrupt through askd until the run ends,
asking every interrupt of a step at once and waiting through dropped links
and askd restarts. *Deferred*: when a run stopped on interrupts,
:meth:`~AskdInterrupts.submit` asks for each and returns at once; later, any
process with the same checkpointer calls :meth:`~AskdInterrupts.collect`
for the ``Command`` to resume with (``None`` while someone has yet to decide).

Every answer is checked as every approval is: its receipt must be askd's,
for this request, and its digest that of the questions as asked with these
answers; otherwise the answer is not used.

One call is one question: each ask's ``Idempotency-Key`` is made from the
session and the call's own id (the tool call id; for a free-form question,
the interrupt's id, which the checkpointer keeps), so a process that dies
and asks again gets the same question and the same decision.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Unpack

from langchain_core.messages import AIMessage
from langchain_core.tools import BaseTool
from langgraph.types import Command, GraphOutput, Interrupt
from pydantic import BaseModel

from askd.client import AgentClient, AsyncAgentClient, Result, Status
from askd.receipts import ReceiptError, digest, questions_content, verify
from askd.integrations.calls import (
    ApprovalGate,
    Approved,
    AsyncApprovalGate,
    AsyncGated,
    call_key,
    denial_message,
    Denied,
    GateOptions,
    Outcome,
    Pending,
    ToolCall,
)

__all__ = ["AskdInterrupts", "AsyncAskdInterrupts", "NotAnswered", "answer_refusal", "tool_schema"]

FRAMEWORK = "langgraph"


class NotAnswered(Exception):
    """A free-form question ended with no answer (declined, timed out,
    withdrawn): there is no value to resume ``interrupt()`` with. ``message``
    says why, as a denial's does."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def tool_schema(tool: BaseTool) -> dict[str, Any] | None:
    """The JSON Schema of the arguments the model calls ``tool`` with (its
    ``tool_call_schema``, as the model sees it), or None when it has none."""
    schema = tool.tool_call_schema
    if isinstance(schema, dict):
        return schema
    if isinstance(schema, type) and issubclass(schema, BaseModel):
        return schema.model_json_schema()
    return None


@dataclass(frozen=True, slots=True)
class _Review:
    """One gated tool call, asked as an approval."""

    call: ToolCall
    allowed: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class _Question:
    """Questions asked for an interrupt: a free-form one, or a ``respond``-only tool call."""

    call_id: str
    questions: list[dict[str, Any]]
    single: bool  # the resume value is the one answer, not the answers by question
    respond: _Review | None = None  # the tool call it answers for, when it does


@dataclass(frozen=True, slots=True)
class _Answered:
    answers: dict[str, Any]


_Item = _Review | _Question
_ItemOutcome = Outcome | _Answered


class _Interrupts:
    """What the blocking and the asyncio adapter share: whom to ask, and
    what each interrupt asks (no I/O)."""

    def __init__(self, tools: Iterable[BaseTool], asking: GateOptions) -> None:
        self.tools = {tool.name: tool for tool in tools}
        asking.setdefault("agent", "LangGraph agent")
        if asking.get("allow_always"):
            raise ValueError("LangChain's review decisions have no 'always': allow_always cannot be offered")
        self._jwks: dict[str, Any] | None = None

    def _pending_in(self, state: Any) -> list[tuple[Interrupt, list[_Item]]]:
        """Each interrupt ``state`` (a ``StateSnapshot``) waits on, with what askd is asked for it."""
        messages = state.values.get("messages", []) if isinstance(state.values, Mapping) else []
        return [(interrupt, self._items(interrupt, messages)) for interrupt in state.interrupts]

    def _items(self, interrupt: Interrupt, messages: Sequence[Any]) -> list[_Item]:
        value = interrupt.value
        if isinstance(value, Mapping) and "action_requests" in value and "review_configs" in value:
            ids = _batched_call_ids(value["action_requests"], messages)
            by_tool = {c["action_name"]: tuple(c["allowed_decisions"]) for c in value["review_configs"]}
            return [
                self._review(ids[n] or f"{interrupt.id}/{n}", request["name"], request["args"],
                             request.get("description"), by_tool[request["name"]])
                for n, request in enumerate(value["action_requests"])
            ]
        if isinstance(value, Mapping) and value.get("type") == "tool_approval" and "tool_call_id" in value:
            allowed = _allowed_from_schema(interrupt.response_schema)
            schema = _edit_args_schema(interrupt.response_schema)
            return [self._review(value["tool_call_id"], value["name"], value["args"], value.get("description"), allowed,
                                 schema)]
        return [_free_form(interrupt)]

    def _review(self, call_id: str, name: str, args: Mapping[str, Any], description: str | None,
                allowed: tuple[str, ...], schema: dict[str, Any] | None = None) -> _Item:
        tool = self.tools.get(name)
        editable = "edit" in allowed
        call = ToolCall(
            call_id=call_id, name=name, arguments=dict(args),
            schema=tool_schema(tool) if tool is not None else schema,
            description=tool.description if tool is not None else description,
            editable=editable,
        )
        review = _Review(call, allowed)
        if "approve" in allowed or editable:
            if "reject" not in allowed:
                # A denial the graph cannot be told would be a silent approval.
                raise ValueError(f"tool {name!r} allows no 'reject' decision, so askd could not deny it: allow reject")
            return review
        if "respond" in allowed:
            question = args.get("question")
            text = question if isinstance(question, str) and question.strip() else (description or name)
            return _Question(call_id, [{"question": text}], single=True, respond=review)
        raise ValueError(f"tool {name!r} allows none of approve, edit, respond: nothing askd can ask")



def _question_ask(asking: Any, item: _Question) -> dict[str, Any]:
    """``submit``'s keywords for a question (the session, the key, whom to ask)."""
    metadata = {**(asking.metadata or {}), "framework": FRAMEWORK, "agent": asking.agent, "interruptId": item.call_id}
    return {
        "session": asking.session, "user": asking.user, "questions": item.questions, "metadata": metadata,
        "timeout": asking.timeout, "parent_session": asking.parent_session,
        "idempotency_key": call_key(FRAMEWORK, asking.session, item.call_id),
        "to": list(asking.to) if asking.to is not None else None,
    }


def _answer_refused(result: Result, why: str) -> Denied:
    return Denied(f"askd's receipt does not verify, so the answer was not used: {why}", "refused", result.request_id,
                  result.answered_by)


class AskdInterrupts(_Interrupts):
    """Answers a graph's interrupts through askd. ``session``: askd's session
    for this agent's questions; ``tools``: the agent's LangChain tools (their
    schemas and descriptions go into the approvals); whom and how to ask:
    ``GateOptions`` (``user`` or ``to``, ``agent``, the name the person sees,
    ``quorum``, ``timeout``, ...; ``editable`` comes from each tool's allowed
    decisions). ``verify_receipts=False`` lets a call run without checking
    its receipt (protocol section 16); by default an approval whose receipt
    does not verify is a ``reject``, and an answer whose receipt does not
    vouch for it is not used (a ``reject``, or :class:`NotAnswered`). ``client``: an ``AgentClient`` of yours
    (default: one found as every askd client finds askd)."""

    def __init__(
        self,
        *,
        session: str,
        tools: Iterable[BaseTool] = (),
        client: AgentClient | None = None,
        **asking: Unpack[GateOptions],
    ) -> None:
        super().__init__(tools, asking)
        self.gate = ApprovalGate(session=session, framework=FRAMEWORK, client=client, **asking)

    def __enter__(self) -> AskdInterrupts:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self.gate.close()

    # -- inline --------------------------------------------------------------

    def invoke(self, graph: Any, input: Any, config: Mapping[str, Any], **kwargs: Any) -> GraphOutput[Any]:
        """Run ``graph`` on ``input`` (its ``invoke``, ``version="v2"``) and
        answer each interrupt through askd until the run ends; the run's
        last output. ``config`` names the thread (the graph needs a checkpointer)."""
        output: GraphOutput[Any] = graph.invoke(input, config, version="v2", **kwargs)
        return self._answer_until_done(graph, config, output, kwargs)

    def resume(self, graph: Any, config: Mapping[str, Any], **kwargs: Any) -> GraphOutput[Any] | None:
        """Answer the interrupts a stopped run of this thread is waiting on (a
        restarted process: the same questions, asked once) and run it to its
        end; None when the thread waits on nothing."""
        if not graph.get_state(config).interrupts:
            return None
        command = self._decide(graph, config, wait=None)
        assert command is not None, "waited on every decision"
        output: GraphOutput[Any] = graph.invoke(command, config, version="v2", **kwargs)
        return self._answer_until_done(graph, config, output, kwargs)

    def _answer_until_done(
        self, graph: Any, config: Mapping[str, Any], output: GraphOutput[Any], kwargs: Mapping[str, Any]
    ) -> GraphOutput[Any]:
        while output.interrupts:
            command = self._decide(graph, config, wait=None)
            assert command is not None, "waited on every decision"
            output = graph.invoke(command, config, version="v2", **kwargs)
        return output

    # -- deferred ------------------------------------------------------------

    def submit(self, graph: Any, config: Mapping[str, Any]) -> list[_ItemOutcome]:
        """Ask for every interrupt the thread waits on and return at once:
        each ask's outcome (``Pending`` until someone decides)."""
        return [self._ask(item, wait=0.0) for _, items in self._pending_in(graph.get_state(config)) for item in items]

    def collect(self, graph: Any, config: Mapping[str, Any], wait: float | None = 0.0) -> Command[Any] | None:
        """The ``Command`` that resumes the thread with every decision, or
        None while one is still pending. ``wait``: 0 reports at once, N waits
        up to N seconds for each, None until each ends. Asks what was never
        asked (the same keys: still one question per call). Raises
        :class:`NotAnswered` when a free-form question ended unanswered."""
        return self._decide(graph, config, wait)

    # -- the work ------------------------------------------------------------

    def _decide(self, graph: Any, config: Mapping[str, Any], wait: float | None) -> Command[Any] | None:
        pending = self._pending_in(graph.get_state(config))
        if wait != 0.0:  # every question of the step out at once, then the waits
            for _, items in pending:
                for item in items:
                    self._ask(item, wait=0.0)
        resume: dict[str, Any] = {}
        for interrupt, items in pending:
            outcomes = [self._ask(item, wait) for item in items]
            if any(isinstance(outcome, Pending) for outcome in outcomes):
                return None
            resume[interrupt.id] = _resume_value(interrupt, items, outcomes)
        return Command(resume=resume)

    def _ask(self, item: _Item, wait: float | None) -> _ItemOutcome:
        if isinstance(item, _Review):
            return self.gate.ask(item.call) if wait == 0.0 else self.gate.collect(item.call, wait)
        return self._ask_question(item, wait)

    def _ask_question(self, item: _Question, wait: float | None) -> _ItemOutcome:
        asking, client = self.gate.asking, self.gate.client
        result = client.submit(**_question_ask(asking, item))
        if result.pending and (wait is None or wait > 0):
            result = client.wait(asking.session, result.request_id, wait)
        outcome = _question_outcome(result)
        if isinstance(outcome, _Answered) and asking.verify_receipts:
            why = answer_refusal(result, item.questions, self._keys())
            if why is not None and why.startswith("unknown kid"):  # a key newer than the copy kept
                why = answer_refusal(result, item.questions, self._keys(fresh=True))
            if why is not None:
                return _answer_refused(result, why)
        return outcome

    def _keys(self, fresh: bool = False) -> dict[str, Any]:
        if self._jwks is None or fresh:
            self._jwks = self.gate.client.jwks()
        return self._jwks


class AsyncAskdInterrupts(_Interrupts, AsyncGated):
    """:class:`AskdInterrupts` for asyncio: the graph run with ``ainvoke``
    and ``aget_state``, askd reached with an ``AsyncAgentClient`` (``client``);
    the same parameters and methods, awaited."""

    def __init__(
        self,
        *,
        session: str,
        tools: Iterable[BaseTool] = (),
        client: AsyncAgentClient | None = None,
        **asking: Unpack[GateOptions],
    ) -> None:
        super().__init__(tools, asking)
        self.gate = AsyncApprovalGate(session=session, framework=FRAMEWORK, client=client, **asking)

    # -- inline --------------------------------------------------------------

    async def invoke(self, graph: Any, input: Any, config: Mapping[str, Any], **kwargs: Any) -> GraphOutput[Any]:
        """Run ``graph`` on ``input`` (its ``ainvoke``, ``version="v2"``) and
        answer each interrupt through askd until the run ends; the run's
        last output. ``config`` names the thread (the graph needs a checkpointer)."""
        output: GraphOutput[Any] = await graph.ainvoke(input, config, version="v2", **kwargs)
        return await self._answer_until_done(graph, config, output, kwargs)

    async def resume(self, graph: Any, config: Mapping[str, Any], **kwargs: Any) -> GraphOutput[Any] | None:
        """Answer the interrupts a stopped run of this thread is waiting on (a
        restarted process: the same questions, asked once) and run it to its
        end; None when the thread waits on nothing."""
        if not (await graph.aget_state(config)).interrupts:
            return None
        command = await self._decide(graph, config, wait=None)
        assert command is not None, "waited on every decision"
        output: GraphOutput[Any] = await graph.ainvoke(command, config, version="v2", **kwargs)
        return await self._answer_until_done(graph, config, output, kwargs)

    async def _answer_until_done(
        self, graph: Any, config: Mapping[str, Any], output: GraphOutput[Any], kwargs: Mapping[str, Any]
    ) -> GraphOutput[Any]:
        while output.interrupts:
            command = await self._decide(graph, config, wait=None)
            assert command is not None, "waited on every decision"
            output = await graph.ainvoke(command, config, version="v2", **kwargs)
        return output

    # -- deferred ------------------------------------------------------------

    async def submit(self, graph: Any, config: Mapping[str, Any]) -> list[_ItemOutcome]:
        """Ask for every interrupt the thread waits on and return at once:
        each ask's outcome (``Pending`` until someone decides)."""
        pending = self._pending_in(await graph.aget_state(config))
        return [await self._ask(item, wait=0.0) for _, items in pending for item in items]

    async def collect(self, graph: Any, config: Mapping[str, Any], wait: float | None = 0.0) -> Command[Any] | None:
        """The ``Command`` that resumes the thread with every decision, or
        None while one is still pending. ``wait``: 0 reports at once, N waits
        up to N seconds for each, None until each ends. Asks what was never
        asked (the same keys: still one question per call). Raises
        :class:`NotAnswered` when a free-form question ended unanswered."""
        return await self._decide(graph, config, wait)

    # -- the work ------------------------------------------------------------

    async def _decide(self, graph: Any, config: Mapping[str, Any], wait: float | None) -> Command[Any] | None:
        pending = self._pending_in(await graph.aget_state(config))
        if wait != 0.0:  # every question of the step out at once, then the waits
            for _, items in pending:
                for item in items:
                    await self._ask(item, wait=0.0)
        resume: dict[str, Any] = {}
        for interrupt, items in pending:
            outcomes = [await self._ask(item, wait) for item in items]
            if any(isinstance(outcome, Pending) for outcome in outcomes):
                return None
            resume[interrupt.id] = _resume_value(interrupt, items, outcomes)
        return Command(resume=resume)

    async def _ask(self, item: _Item, wait: float | None) -> _ItemOutcome:
        if isinstance(item, _Review):
            return await self.gate.ask(item.call) if wait == 0.0 else await self.gate.collect(item.call, wait)
        return await self._ask_question(item, wait)

    async def _ask_question(self, item: _Question, wait: float | None) -> _ItemOutcome:
        asking, client = self.gate.asking, self.gate.client
        result = await client.submit(**_question_ask(asking, item))
        if result.pending and (wait is None or wait > 0):
            result = await client.wait(asking.session, result.request_id, wait)
        outcome = _question_outcome(result)
        if isinstance(outcome, _Answered) and asking.verify_receipts:
            why = answer_refusal(result, item.questions, await self._keys())
            if why is not None and why.startswith("unknown kid"):  # a key newer than the copy kept
                why = answer_refusal(result, item.questions, await self._keys(fresh=True))
            if why is not None:
                return _answer_refused(result, why)
        return outcome

    async def _keys(self, fresh: bool = False) -> dict[str, Any]:
        if self._jwks is None or fresh:
            self._jwks = await self.gate.client.jwks()
        return self._jwks


def answer_refusal(result: Result, questions: list[dict[str, Any]], jwks: Mapping[str, Any]) -> str | None:
    """Why ``result``'s receipt does not vouch for its answers to exactly
    ``questions`` as asked, or None when it does (protocol section 16: the
    signature, this request's, the digest of the questions and answers)."""
    if not result.receipt:
        return "the result carries no receipt"
    try:
        claims = verify(result.receipt, jwks)
    except ReceiptError as err:
        return str(err)
    if claims.get("sid") != result.session_id or claims.get("rid") != result.request_id:
        return "the receipt is for another request"
    if claims.get("digest") != digest(questions_content(questions, result.answers)):
        return "digest mismatch: the receipt is for other questions or other answers"
    return None


def _question_outcome(result: Result) -> _ItemOutcome:
    if result.pending:
        return Pending(result.request_id, result.expires_at)
    if result.status is Status.answered and result.answers:
        return _Answered(dict(result.answers))
    if result.status is Status.declined:
        return Denied(denial_message(result), "declined", result.request_id, result.answered_by, result.reason)
    if result.status is Status.timeout:
        return Denied(denial_message(result), "timeout", result.request_id)
    return Denied(denial_message(result), "cancelled", result.request_id)


def _resume_value(interrupt: Interrupt, items: list[_Item], outcomes: list[_ItemOutcome]) -> Any:
    value = interrupt.value
    if isinstance(value, Mapping) and "action_requests" in value and "review_configs" in value:
        return {"decisions": [_decision(item, outcome) for item, outcome in zip(items, outcomes)]}
    if isinstance(value, Mapping) and value.get("type") == "tool_approval" and "tool_call_id" in value:
        return _decision(items[0], outcomes[0])
    [item], [outcome] = items, outcomes
    assert isinstance(item, _Question)
    if isinstance(outcome, Denied):
        raise NotAnswered(outcome.message)
    assert isinstance(outcome, _Answered)
    return _answer_value(item, outcome)


def _decision(item: _Item, outcome: _ItemOutcome) -> dict[str, Any]:
    """The middleware's decision for one call."""
    review = item if isinstance(item, _Review) else item.respond
    assert review is not None
    if isinstance(outcome, Denied):
        if "reject" not in review.allowed:
            raise NotAnswered(outcome.message)
        return {"type": "reject", "message": outcome.message}
    if isinstance(outcome, _Answered):
        assert isinstance(item, _Question)
        answer = _answer_value(item, outcome)
        return {"type": "respond", "message": answer if isinstance(answer, str) else ", ".join(map(str, answer))}
    assert isinstance(outcome, Approved)
    if outcome.edited or "approve" not in review.allowed:
        return {"type": "edit", "edited_action": {"name": review.call.name, "args": outcome.arguments}}
    return {"type": "approve"}


def _answer_value(item: _Question, outcome: _Answered) -> Any:
    if not item.single:
        return outcome.answers
    return outcome.answers.get(item.questions[0]["question"], "")


def _free_form(interrupt: Interrupt) -> _Question:
    value = interrupt.value
    if isinstance(value, str) and value.strip():
        return _Question(interrupt.id, [{"question": value}], single=True)
    if isinstance(value, Mapping) and isinstance(value.get("question"), str):
        return _Question(interrupt.id, [dict(value)], single=True)
    if isinstance(value, Mapping) and isinstance(value.get("questions"), list) and value["questions"]:
        return _Question(interrupt.id, [dict(q) for q in value["questions"]], single=False)
    raise ValueError(
        f"interrupt {interrupt.id} is neither a tool review nor a question askd can ask: "
        'interrupt with a string, {"question": ...} or {"questions": [...]}'
    )


def _batched_call_ids(requests: Sequence[Mapping[str, Any]], messages: Sequence[Any]) -> list[str | None]:
    """The tool call id of each action of a batched review: the model's last
    turn's calls, matched in order by name and arguments (the middleware
    lists the gated calls of that turn in order, and leaves their ids out)."""
    last = next((m for m in reversed(messages) if isinstance(m, AIMessage) and m.tool_calls), None)
    calls = list(last.tool_calls) if last is not None else []
    ids: list[str | None] = []
    at = 0
    for request in requests:
        found = next(
            (n for n in range(at, len(calls)) if calls[n]["name"] == request["name"] and calls[n]["args"] == request["args"]),
            None,
        )
        if found is None:
            ids.append(None)
            continue
        ids.append(calls[found].get("id") or None)
        at = found + 1
    return ids


def _allowed_from_schema(schema: Any) -> tuple[str, ...]:
    """The decisions a per-call interrupt takes, read from its ``response_schema``
    (a ``oneOf`` of decision objects, or one decision's object)."""
    if not isinstance(schema, Mapping):
        return ("approve", "edit", "reject", "respond")
    defs = schema.get("$defs", {})
    branches = schema.get("oneOf") or [schema]
    allowed = []
    for branch in branches:
        target = branch
        ref = branch.get("$ref") if isinstance(branch, Mapping) else None
        if isinstance(ref, str) and ref.startswith("#/$defs/"):
            target = defs.get(ref.removeprefix("#/$defs/"), {})
        const = target.get("properties", {}).get("type", {}).get("const") if isinstance(target, Mapping) else None
        if isinstance(const, str):
            allowed.append(const)
    return tuple(allowed) or ("approve", "edit", "reject", "respond")


def _edit_args_schema(schema: Any) -> dict[str, Any] | None:
    """The tool's argument schema a per-call interrupt publishes for an
    ``edit`` (its ``EditedAction``'s ``args``), with the definitions it
    refers to; None when the interrupt allows no edit or shows none."""
    if not isinstance(schema, Mapping):
        return None
    defs = schema.get("$defs")
    edited = defs.get("EditedAction") if isinstance(defs, Mapping) else None
    args = edited.get("properties", {}).get("args") if isinstance(edited, Mapping) else None
    if not isinstance(args, Mapping):
        return None
    ref = args.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/") and isinstance(defs, Mapping):
        args = defs.get(ref.removeprefix("#/$defs/"))
        if not isinstance(args, Mapping):
            return None
    return {**args, "$defs": dict(defs)} if isinstance(defs, Mapping) else dict(args)
