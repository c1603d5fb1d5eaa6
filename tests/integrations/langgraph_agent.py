"""A LangChain agent in its own process, for the test that kills it while
it waits: ``python -m tests.integrations.langgraph_agent SESSION LOG`` runs
one scripted turn calling ``deploy`` (which logs each run to LOG) under
``HumanInTheLoopMiddleware``, its run kept in a SQLite checkpointer beside LOG. Started again, it finds the run
stopped on its interrupt and resumes it, asking askd again (the same key:
the same question). It prints each tool message as JSON lines at the end.
askd is found as every client finds it (``ASKD_URL``, ``ASKD_AGENT_TOKEN``)."""

from __future__ import annotations

import json
import sqlite3
import sys
from pathlib import Path

from langchain.agents import create_agent
from langchain.agents.middleware import HumanInTheLoopMiddleware
from langgraph.checkpoint.sqlite import SqliteSaver

from askd.integrations.langgraph import AskdInterrupts
from tests.integrations.langchain_scripted import calls, deploy_tool, script, tool_messages

CONFIG = {"configurable": {"thread_id": "run-1"}}


def main(session: str, log: Path) -> None:
    deploy = deploy_tool(log)
    with sqlite3.connect(log.parent / "checkpoints.db", check_same_thread=False) as conn:
        graph = create_agent(
            script(calls(("deploy", {"service": "web", "env": "staging"}, "call_deploy"))),
            tools=[deploy],
            middleware=[HumanInTheLoopMiddleware(interrupt_on={"deploy": True})],
            checkpointer=SqliteSaver(conn),
        )
        with AskdInterrupts(session=session, user="alice", tools=[deploy]) as askd:
            output = askd.resume(graph, CONFIG) or askd.invoke(graph, {"messages": [("user", "ship it")]}, CONFIG)
    print(json.dumps(tool_messages(output.value["messages"])), flush=True)


if __name__ == "__main__":
    main(sys.argv[1], Path(sys.argv[2]))
