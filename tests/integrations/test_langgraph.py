"""The LangGraph / LangChain adapter (protocol section 21) with the real
``langgraph`` and ``langchain`` packages, a scripted chat model, and a real
daemon whose person (alice's tab) decides: ``HumanInTheLoopMiddleware``'s
interrupts in both its modes asked as approvals, answered in its decision
shape; a free-form ``interrupt()`` and a ``respond`` tool asked as
questions; inline and deferred; a process killed while it waits."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any, TypedDict

import httpx
import pytest
from langchain.agents import create_agent
from langchain.agents.middleware import HumanInTheLoopMiddleware
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, StateGraph
from langgraph.types import interrupt

from askd.client import AgentClient
from askd.integrations.langgraph import AskdInterrupts, AsyncAskdInterrupts, NotAnswered
from askd.receipts.jws import verify
from tests.conftest import RunningDaemon
from tests.integrations.agent_restart import killed_mid_wait_then_approved
from tests.integrations.langchain_scripted import ask_user, calls, delete_tool, deploy_tool, script, tool_messages
from tests.integrations.person import FAST_RETRY, agent_client, forged_signature, other_arguments
from tests.integrations.reviewer import BlockingTampering, Reviewer
from tests.receipts.test_wire import jwks

CONFIG = {"configurable": {"thread_id": "t1"}}
DEPLOY = ("deploy", {"service": "web", "env": "staging"}, "call_deploy")
DELETE = ("delete_file", {"path": "/tmp/report"}, "call_delete")
ASK = ("ask_user", {"question": "Which region?"}, "call_ask")


@pytest.fixture
async def reviewer(daemon: RunningDaemon) -> Reviewer:
    return await Reviewer.open_for(daemon)


def client(daemon: RunningDaemon, transport: httpx.BaseTransport | None = None) -> AgentClient:
    return AgentClient(daemon.url, daemon.token("agent"), poll_seconds=0.3, retry=FAST_RETRY, transport=transport)


class Agent:
    """A LangChain agent under ``HumanInTheLoopMiddleware`` whose model makes
    the tool calls given, in one turn; its tools log each run to ``ran``."""

    def __init__(self, tmp_path: Path, *tool_calls: tuple[str, dict[str, Any], str], mode: str = "batched",
                 interrupt_on: dict[str, Any] | None = None) -> None:
        self.ran = tmp_path / "ran.log"
        self.ran.touch()
        self.tools = [deploy_tool(self.ran), delete_tool(self.ran), ask_user]
        on = interrupt_on or {"deploy": True, "delete_file": {"allowed_decisions": ["approve", "reject"]},
                              "ask_user": {"allowed_decisions": ["respond"]}}
        self.graph = create_agent(
            script(calls(*tool_calls)), tools=self.tools,
            middleware=[HumanInTheLoopMiddleware(interrupt_on=on, interrupt_mode=mode)],  # type: ignore[arg-type]
            checkpointer=InMemorySaver(),
        )

    def askd(self, daemon: RunningDaemon, tools_known: bool = True, **kw: Any) -> AskdInterrupts:
        kw.setdefault("client", client(daemon))
        return AskdInterrupts(session="lg", user="alice", tools=self.tools if tools_known else (), agent="Release bot", **kw)

    def runs(self) -> list[str]:
        return self.ran.read_text().splitlines()

    async def run(self, daemon: RunningDaemon, **kw: Any) -> dict[str, str]:
        """Run inline in a thread (the daemon shares this loop); what the model was told of each call."""

        def invoke() -> dict[str, str]:
            with self.askd(daemon, **kw) as askd:
                output = askd.invoke(self.graph, {"messages": [("user", "go")]}, CONFIG)
            return tool_messages(output.value["messages"])

        return await asyncio.to_thread(invoke)


@pytest.mark.parametrize("mode", ["batched", "per_call"])
async def test_an_approved_call_runs_once_with_a_receipt_that_verifies(
    daemon: RunningDaemon, reviewer: Reviewer, tmp_path: Path, mode: str
) -> None:
    agent = Agent(tmp_path, DEPLOY, mode=mode)
    run = asyncio.create_task(agent.run(daemon))
    [item] = await reviewer.pending()
    action = item["action"]
    assert (action["name"], action["arguments"], action["editable"]) == ("deploy", DEPLOY[1], True)
    assert action["schema"]["required"] == ["service", "env"]
    assert "**Release bot**" in action["summary"] and "Deploy a service" in action["summary"]
    assert agent.runs() == []  # nothing runs before the person decides
    assert (await reviewer.approve(item))["payload"]["accepted"] is True
    told = await asyncio.wait_for(run, 10)
    assert told == {"call_deploy": "deployed web to staging"}
    assert agent.runs() == ["deploy web staging"]
    result = (await daemon.result("lg", item["requestId"])).json()
    verify(result["receipt"], await jwks(daemon), action={"name": "deploy", "arguments": DEPLOY[1]})


@pytest.mark.parametrize("mode", ["batched", "per_call"])
async def test_an_edit_is_checked_against_the_tools_schema_and_runs_as_edited(
    daemon: RunningDaemon, reviewer: Reviewer, tmp_path: Path, mode: str
) -> None:
    agent = Agent(tmp_path, DEPLOY, mode=mode)
    run = asyncio.create_task(agent.run(daemon))
    [item] = await reviewer.pending()
    refused = await reviewer.approve(item, arguments={"service": "web", "env": 5})
    assert refused["type"] == "error" and "env" in json.dumps(refused)  # not a string: the tool's schema says no
    assert (await reviewer.approve(item, arguments={"service": "web", "env": "production"}))["payload"]["accepted"]
    told = await asyncio.wait_for(run, 10)
    assert agent.runs() == ["deploy web production"]
    assert "human reviewer replaced this tool call" in told["call_deploy"]  # the middleware's own notice
    assert told["call_deploy"].endswith("deployed web to production")


async def test_per_call_without_tools_takes_the_schema_the_interrupt_publishes(
    daemon: RunningDaemon, reviewer: Reviewer, tmp_path: Path
) -> None:
    agent = Agent(tmp_path, DEPLOY, mode="per_call")
    run = asyncio.create_task(agent.run(daemon, tools_known=False))
    [item] = await reviewer.pending()
    assert item["action"]["schema"]["required"] == ["service", "env"]  # from the interrupt's response_schema
    refused = await reviewer.approve(item, arguments={"service": "web"})
    assert refused["type"] == "error" and "env" in json.dumps(refused)
    await reviewer.approve(item, arguments={"service": "api", "env": "staging"})
    await asyncio.wait_for(run, 10)
    assert agent.runs() == ["deploy api staging"]


async def test_a_denial_reaches_the_model_with_its_reason_and_nothing_runs(
    daemon: RunningDaemon, reviewer: Reviewer, tmp_path: Path
) -> None:
    agent = Agent(tmp_path, DEPLOY)
    run = asyncio.create_task(agent.run(daemon))
    [item] = await reviewer.pending()
    await reviewer.deny(item, "not on a Friday")
    told = await asyncio.wait_for(run, 10)
    assert agent.runs() == []
    assert "alice denied it: not on a Friday" in told["call_deploy"]


async def test_a_timeout_is_a_denial_that_says_so(daemon: RunningDaemon, tmp_path: Path) -> None:
    agent = Agent(tmp_path, DEPLOY)
    told = await asyncio.wait_for(agent.run(daemon, timeout=0.5), 10)
    assert agent.runs() == []
    assert "nobody decided in time" in told["call_deploy"]


@pytest.mark.parametrize("mode", ["batched", "per_call"])
async def test_two_calls_in_one_turn_are_two_questions_asked_at_once(
    daemon: RunningDaemon, reviewer: Reviewer, tmp_path: Path, mode: str
) -> None:
    agent = Agent(tmp_path, DEPLOY, DELETE, mode=mode)
    run = asyncio.create_task(agent.run(daemon))
    items = await reviewer.pending(2)  # both out before either is decided
    by_name = {item["action"]["name"]: item for item in items}
    assert by_name["delete_file"]["action"].get("editable") is not True  # delete_file allows no edit
    await reviewer.deny(by_name["delete_file"], "keep it")
    await reviewer.approve(by_name["deploy"])
    told = await asyncio.wait_for(run, 10)
    assert agent.runs() == ["deploy web staging"]
    assert told["call_deploy"] == "deployed web to staging"
    assert "alice denied it: keep it" in told["call_delete"]


async def test_a_tampered_result_is_refused_by_its_receipt(daemon: RunningDaemon, reviewer: Reviewer, tmp_path: Path) -> None:
    agent = Agent(tmp_path, DEPLOY)
    run = asyncio.create_task(agent.run(daemon, client=client(daemon, BlockingTampering(other_arguments))))
    [item] = await reviewer.pending()
    await reviewer.approve(item)
    told = await asyncio.wait_for(run, 10)
    assert agent.runs() == []  # neither as approved nor as forged
    assert "receipt does not verify" in told["call_deploy"] and "digest mismatch" in told["call_deploy"]


async def test_a_forged_receipt_signature_is_refused(daemon: RunningDaemon, reviewer: Reviewer, tmp_path: Path) -> None:
    agent = Agent(tmp_path, DEPLOY)
    run = asyncio.create_task(agent.run(daemon, client=client(daemon, BlockingTampering(forged_signature))))
    [item] = await reviewer.pending()
    await reviewer.approve(item)
    told = await asyncio.wait_for(run, 10)
    assert agent.runs() == []
    assert "receipt does not verify" in told["call_deploy"] and "bad signature" in told["call_deploy"]


async def test_other_arguments_for_a_tool_that_takes_no_edit_are_refused(
    daemon: RunningDaemon, reviewer: Reviewer, tmp_path: Path
) -> None:
    # delete_file allows approve and reject only: arguments other than the
    # call's cannot be run as asked, even with receipt checks off.
    agent = Agent(tmp_path, DELETE)
    tampering = client(daemon, BlockingTampering(other_arguments))
    run = asyncio.create_task(agent.run(daemon, client=tampering, verify_receipts=False))
    [item] = await reviewer.pending()
    assert item["action"].get("editable") is not True
    await reviewer.approve(item)
    told = await asyncio.wait_for(run, 10)
    assert agent.runs() == []
    assert "cannot change" in told["call_delete"]


async def test_a_respond_tool_is_a_question_whose_answer_the_model_gets(
    daemon: RunningDaemon, reviewer: Reviewer, tmp_path: Path
) -> None:
    agent = Agent(tmp_path, ASK)
    run = asyncio.create_task(agent.run(daemon))
    [item] = await reviewer.pending()
    assert [q["question"] for q in item["questions"]] == ["Which region?"]
    await reviewer.answer(item, {"Which region?": "eu-west-1"})
    told = await asyncio.wait_for(run, 10)
    assert told == {"call_ask": "eu-west-1"}


class RegionState(TypedDict, total=False):
    region: str
    plan: dict[str, Any]


def free_form_graph(value: Any) -> Any:
    def choose(state: RegionState) -> RegionState:
        return {"region": interrupt(value)} if not isinstance(value, dict) or "questions" not in value else {
            "plan": interrupt(value)
        }

    builder = StateGraph(RegionState)
    builder.add_node("choose", choose)
    builder.add_edge(START, "choose")
    return builder.compile(checkpointer=InMemorySaver())


async def test_a_free_form_interrupt_is_asked_and_its_answer_resumes_the_graph(
    daemon: RunningDaemon, reviewer: Reviewer
) -> None:
    graph = free_form_graph({"question": "Which region?", "options": [{"label": "eu"}, {"label": "us"}]})

    def invoke() -> Any:
        with AskdInterrupts(session="lg", user="alice", client=client(daemon)) as askd:
            return askd.invoke(graph, {}, CONFIG).value

    run = asyncio.create_task(asyncio.to_thread(invoke))
    [item] = await reviewer.pending()
    assert item["questions"] == [{"question": "Which region?", "options": [{"label": "eu"}, {"label": "us"}]}]
    await reviewer.answer(item, {"Which region?": "eu"})
    assert await asyncio.wait_for(run, 10) == {"region": "eu"}


async def test_several_free_form_questions_resume_with_the_answers_and_a_decline_raises(
    daemon: RunningDaemon, reviewer: Reviewer
) -> None:
    questions = {"questions": [{"question": "Which region?"}, {"question": "How many replicas?"}]}
    graph = free_form_graph(questions)

    def invoke() -> Any:
        with AskdInterrupts(session="lg", user="alice", client=client(daemon)) as askd:
            return askd.invoke(graph, {}, CONFIG).value

    run = asyncio.create_task(asyncio.to_thread(invoke))
    [item] = await reviewer.pending()
    await reviewer.answer(item, {"Which region?": "eu", "How many replicas?": "3"})
    assert await asyncio.wait_for(run, 10) == {"plan": {"Which region?": "eu", "How many replicas?": "3"}}

    other = free_form_graph("Ship today?")
    config = {"configurable": {"thread_id": "t2"}}

    def invoke_other() -> Any:
        with AskdInterrupts(session="lg", user="alice", client=client(daemon)) as askd:
            return askd.invoke(other, {}, config).value

    run = asyncio.create_task(asyncio.to_thread(invoke_other))
    [item] = await reviewer.pending()
    await reviewer.deny(item, "ask Bob")
    with pytest.raises(NotAnswered, match="alice denied it: ask Bob"):
        await asyncio.wait_for(run, 10)


async def test_a_tampered_answer_is_not_used(daemon: RunningDaemon, reviewer: Reviewer) -> None:
    graph = free_form_graph("Which region?")
    forged = BlockingTampering(lambda data: {**data, "answers": {"Which region?": "attacker-region"}})

    def invoke() -> Any:
        with AskdInterrupts(session="lg", user="alice", client=client(daemon, forged)) as askd:
            return askd.invoke(graph, {}, CONFIG).value

    run = asyncio.create_task(asyncio.to_thread(invoke))
    [item] = await reviewer.pending()
    await reviewer.answer(item, {"Which region?": "eu"})
    with pytest.raises(NotAnswered, match="receipt does not verify, so the answer was not used: digest mismatch"):
        await asyncio.wait_for(run, 10)


async def test_deferred_submit_returns_at_once_and_a_later_collect_resumes(
    daemon: RunningDaemon, reviewer: Reviewer, tmp_path: Path
) -> None:
    agent = Agent(tmp_path, DEPLOY, DELETE)

    def start() -> list[Any]:
        agent.graph.invoke({"messages": [("user", "go")]}, CONFIG, version="v2")
        with agent.askd(daemon) as askd:
            return askd.submit(agent.graph, CONFIG)

    outcomes = await asyncio.to_thread(start)
    assert [type(o).__name__ for o in outcomes] == ["Pending", "Pending"]

    def collect() -> Any:  # another AskdInterrupts, as a later process would make
        with agent.askd(daemon) as askd:
            return askd.collect(agent.graph, CONFIG)

    assert await asyncio.to_thread(collect) is None  # nobody has decided
    items = await reviewer.pending(2)
    assert await reviewer.asked_count() == 2  # collecting asked nothing new
    for item in items:
        await reviewer.approve(item)
    command = await asyncio.to_thread(collect)
    decisions = list(command.resume.values())
    assert decisions == [{"decisions": [{"type": "approve"}, {"type": "approve"}]}]
    output = await asyncio.to_thread(agent.graph.invoke, command, CONFIG, version="v2")
    assert not output.interrupts and sorted(agent.runs()) == ["delete /tmp/report", "deploy web staging"]


def test_a_tool_that_cannot_be_rejected_is_refused_before_asking(tmp_path: Path) -> None:
    agent = Agent(tmp_path, DEPLOY, interrupt_on={"deploy": {"allowed_decisions": ["approve"]}})
    agent.graph.invoke({"messages": [("user", "go")]}, CONFIG, version="v2")
    with AskdInterrupts(session="lg", user="alice", client=AgentClient("http://127.0.0.1:9", "t")) as askd:
        with pytest.raises(ValueError, match="allows no 'reject'"):
            askd.collect(agent.graph, CONFIG)


async def test_an_agent_killed_while_it_waits_asks_the_same_question_again(
    daemon: RunningDaemon, reviewer: Reviewer, tmp_path: Path
) -> None:
    # The second process resumes the run its checkpointer kept (SQLite, beside the log).
    log = tmp_path / "ran.log"
    out = await killed_mid_wait_then_approved(daemon, reviewer, "tests.integrations.langgraph_agent", log)
    assert json.loads(out.splitlines()[-1]) == {"call_deploy": "deployed web to staging"}
    assert log.read_text() == "deploy web staging\n"  # ran once, by the second process
    assert await reviewer.asked_count() == 1


def test_approve_always_cannot_be_offered() -> None:
    with pytest.raises(ValueError, match="no 'always'"):
        AskdInterrupts(session="lg", user="alice", allow_always=True, client=AgentClient("http://127.0.0.1:9", "t"))


# The asyncio adapter: the graph run with ainvoke in the test's own loop.


async def test_async_two_calls_asked_at_once_one_approved_one_denied(
    daemon: RunningDaemon, reviewer: Reviewer, tmp_path: Path
) -> None:
    agent = Agent(tmp_path, DEPLOY, DELETE, mode="per_call")

    async def run() -> dict[str, str]:
        async with AsyncAskdInterrupts(session="lg", user="alice", tools=agent.tools, client=agent_client(daemon)) as askd:
            output = await askd.invoke(agent.graph, {"messages": [("user", "go")]}, CONFIG)
        return tool_messages(output.value["messages"])

    running = asyncio.create_task(run())
    items = await reviewer.pending(2)
    by_name = {item["action"]["name"]: item for item in items}
    await reviewer.approve(by_name["deploy"], arguments={"service": "web", "env": "production"})
    await reviewer.deny(by_name["delete_file"], "keep it")
    told = await asyncio.wait_for(running, 10)
    assert agent.runs() == ["deploy web production"]
    assert "alice denied it: keep it" in told["call_delete"]


async def test_async_deferred_collect_and_a_free_form_question(daemon: RunningDaemon, reviewer: Reviewer) -> None:
    graph = free_form_graph("Which region?")
    await graph.ainvoke({}, CONFIG, version="v2")
    async with AsyncAskdInterrupts(session="lg", user="alice", client=agent_client(daemon)) as askd:
        [pending] = await askd.submit(graph, CONFIG)
        assert type(pending).__name__ == "Pending"
        assert await askd.collect(graph, CONFIG) is None
        [item] = await reviewer.pending()
        await reviewer.answer(item, {"Which region?": "eu"})
        command = await askd.collect(graph, CONFIG, wait=None)
        assert command is not None and list(command.resume.values()) == ["eu"]
        output = await askd.resume(graph, CONFIG)  # what a later process would do: the same answer, asked once
        assert output is not None and output.value == {"region": "eu"} and not output.interrupts
        assert await askd.resume(graph, CONFIG) is None  # the thread waits on nothing now
    assert await reviewer.asked_count() == 1
