"""Answer links to an action to approve in Chromium (protocol sections 12
and 17), on a phone, with no script, against a real daemon: opening the
*Approve* link decides nothing, its button approves; the *Deny* link opens
the reason and denies; the page keeps the CSP (the ``phone`` context
checks)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from playwright.async_api import expect

from askd.channels import links
from tests.system.browser.test_links import phone, settings_overrides, waiting_agent  # noqa: F401  (fixtures)
from tests.conftest import RunningDaemon
from tests.system.links.conftest import link

pytestmark = pytest.mark.browser

ACTION = {"name": "deploy", "arguments": {"env": "prod"}, "summary": "Ship **v2**", "preview": "```diff\n-v1\n+v2\n```"}


async def ask_action(daemon: RunningDaemon, quorum: int = 1) -> str:
    body = {"to": ["alice", "bob"], "action": ACTION, "quorum": quorum}
    r = await daemon.http.post(f"{daemon.url}/v1/sessions/s1/questions", json=body, headers=daemon.agent_headers)
    assert r.status_code == 201, r.text
    return str(r.json()["requestId"])


async def test_the_approve_link_approves_only_when_tapped(daemon: RunningDaemon, phone: Any) -> None:  # noqa: F811
    rid = await ask_action(daemon, quorum=2)
    agent = await waiting_agent(daemon, "s1", rid)
    page = await phone.new_page()
    for user in ("alice", "bob"):
        url = link(daemon, "s1", rid, user, links.APPROVE)
        for _ in range(2):  # a previewer, then the person
            response = await page.goto(url)
            assert response is not None and response.status == 200
        await expect(page.locator("h2")).to_have_text("deploy")
        await expect(page.locator(".md.summary strong")).to_have_text("v2")
        await expect(page.locator("pre.arguments")).to_contain_text('"env": "prod"')
        assert not agent.done()
        await page.get_by_role("button", name="Approve", exact=True).click()
        if user == "alice":
            await expect(page.locator(".notice")).to_contain_text("your approval was recorded")
            await expect(page.locator(".progress")).to_have_text("1 of 2 approvals: alice")
    await expect(page.locator(".outcome")).to_have_text("Thank you: you approved it, and the agent may act.")
    body = (await asyncio.wait_for(agent, 10)).json()
    assert (body["status"], body["approved"], body["via"]) == ("answered", True, "link")


async def test_the_deny_link_opens_the_reason(daemon: RunningDaemon, phone: Any) -> None:  # noqa: F811
    rid = await ask_action(daemon)
    page = await phone.new_page()
    await page.goto(link(daemon, "s1", rid, "bob", links.DENY))
    await expect(page.get_by_role("button", name="Approve", exact=True)).to_have_count(0)
    await page.locator('textarea[name="reason"]').fill("not on a Friday")
    await page.get_by_role("button", name="Deny", exact=True).click()
    await expect(page.locator(".outcome")).to_have_text("You denied this action.")
    await expect(page.locator("main")).not_to_contain_text("Friday")
    body = (await daemon.result("s1", rid)).json()
    assert (body["status"], body["answeredBy"], body["reason"]) == ("declined", "bob", "not on a Friday")
