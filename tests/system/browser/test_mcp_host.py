"""The page while the person answers in the MCP host: the question shows in
the inbox, and its panel closes when the host's form is submitted."""

from __future__ import annotations

import asyncio
from typing import Any

from mcp import types
from playwright.async_api import expect

from tests.system.browser.conftest import WAIT_MS, OpenInbox
from tests.conftest import RunningDaemon, q
from tests.mcp.conftest import CALL_TIMEOUT, BridgeFactory, bridge  # noqa: F401 (the fixture)


async def test_an_accept_in_the_host_closes_the_pages_panel(daemon: RunningDaemon, inbox: OpenInbox, bridge: BridgeFactory) -> None:  # noqa: F811
    tab = await inbox("alice")
    submit = asyncio.Event()

    async def host(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        await submit.wait()  # the person looks at the page first, then answers in the host
        return types.ElicitResult(action="accept", content={"q1": "SQLite"})

    async with bridge("--url", daemon.url, "--session", "s-host", token=daemon.token("agent"), elicitation=host) as b:
        call = asyncio.create_task(
            b.call("ask_user_questions", {"questions": [q("Which database?", "PostgreSQL", "SQLite")]})
        )
        panel = tab.page.locator("form.panel")
        await expect(panel).to_have_count(1, timeout=WAIT_MS)
        rid = await panel.get_attribute("data-request-id")
        submit.set()
        result = await asyncio.wait_for(call, CALL_TIMEOUT)
    assert (result.structured_content["requestId"], result.structured_content["via"]) == (rid, "mcp")
    await expect(tab.panel(rid)).to_have_count(0, timeout=WAIT_MS)
    await expect(tab.note(rid)).to_be_visible()
