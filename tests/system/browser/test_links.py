"""Answer links in Chromium (spec J): the page a phone opens from a chat or
a mail, with no script, against a real daemon; an open inbox tab sees the
question end."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from playwright.async_api import expect

from tests.system.browser.conftest import WAIT_MS, OpenInbox
from tests.conftest import RunningDaemon, eventually, q
from tests.system.links.conftest import PUBLIC_URL, link

pytestmark = pytest.mark.browser

PHONE = {"width": 360, "height": 740}


@pytest.fixture
def settings_overrides() -> dict[str, Any]:
    return {"public_url": PUBLIC_URL}


@pytest.fixture
async def phone(browser: Any) -> Any:
    """A phone-sized browser context; every page in it is checked for CSP violations."""
    ctx = await browser.new_context(viewport=PHONE, is_mobile=True, has_touch=True)
    problems: list[str] = []
    ctx.on("console", lambda msg: problems.append(msg.text) if "Content Security Policy" in msg.text else None)
    yield ctx
    await ctx.close()
    assert not problems, problems


async def waiting_agent(daemon: RunningDaemon, session: str, rid: str) -> asyncio.Task[Any]:
    task = asyncio.create_task(daemon.result(session, rid, wait=20))
    await eventually(lambda: daemon.agent_waiting(rid), what="the agent waiting")
    return task


async def test_a_one_tap_link_confirms_once_and_a_tab_closes_its_panel(
    daemon: RunningDaemon, inbox: OpenInbox, phone: Any
) -> None:
    tab = await inbox("alice")
    rid = (await daemon.ask("s1", "alice", [q("Deploy to production?", "Yes", "No", header="Release")]))["requestId"]
    await expect(tab.panel(rid)).to_be_visible(timeout=WAIT_MS)
    agent = await waiting_agent(daemon, "s1", rid)

    page = await phone.new_page()
    url = link(daemon, "s1", rid, "alice", 0)
    for _ in range(2):  # opening it (or a previewer fetching it) twice changes nothing
        response = await page.goto(url)
        assert response is not None and response.status == 200
        await expect(page.locator(".chosen")).to_contain_text("Yes")
    assert not agent.done() and (await daemon.result("s1", rid)).json()["status"] == "pending"

    await page.get_by_role("button", name="Confirm").click()
    await expect(page.locator(".outcome")).to_have_text("Thank you: your answer was sent.")
    body = (await asyncio.wait_for(agent, 10)).json()
    assert (body["status"], body["answers"], body["answeredBy"], body["via"]) == (
        "answered", {"Deploy to production?": "Yes"}, "alice", "link"
    )
    await expect(tab.panel(rid)).to_have_count(0, timeout=WAIT_MS)

    # A second tap, on the other option: it says she answered ("you") and changes nothing.
    await page.goto(link(daemon, "s1", rid, "alice", 1))
    await expect(page.locator(".outcome")).to_have_text("You answered this question.")
    assert (await daemon.result("s1", rid)).json()["answers"] == {"Deploy to production?": "Yes"}


async def test_an_altered_link_is_404(daemon: RunningDaemon, phone: Any) -> None:
    rid = (await daemon.ask("s1", "alice", [q("Deploy?", "Yes", "No")]))["requestId"]
    url = link(daemon, "s1", rid, "alice", 0)
    at = len(url) - 30
    altered = url[:at] + ("x" if url[at] != "x" else "y") + url[at + 1 :]
    page = await phone.new_page()
    response = await page.goto(altered)
    assert response is not None and response.status == 404
    await expect(page.locator("main")).to_contain_text("This link is not valid:")
    await expect(page.get_by_role("link", name="Open your askd inbox")).to_have_attribute("href", "../")
    await expect(page.locator("form")).to_have_count(0)


async def test_a_link_after_the_timeout_says_so(daemon: RunningDaemon, phone: Any) -> None:
    rid = (await daemon.ask("s1", "alice", [q("Deploy?", "Yes", "No")], timeoutSeconds=3))["requestId"]
    page = await phone.new_page()
    await page.goto(link(daemon, "s1", rid, "alice", 0))
    await eventually(lambda: not daemon.daemon.hub.registry.get("s1", rid).pending, what="the timeout")
    await page.get_by_role("button", name="Confirm").click()  # the page was opened in time; the tap comes late
    await expect(page.locator(".outcome")).to_have_text("This question timed out before anyone answered.")
    await page.goto(link(daemon, "s1", rid, "alice", 0))
    await expect(page.locator(".outcome")).to_have_text("This question timed out before anyone answered.")


async def test_the_form_link_with_multiselect_and_free_text(daemon: RunningDaemon, phone: Any) -> None:
    questions = [q("Which regions?", "eu", "us", "ap", multi=True, header="Regions"), q("Any notes?", header="Notes")]
    rid = (await daemon.ask("s1", "alice", questions))["requestId"]
    agent = await waiting_agent(daemon, "s1", rid)
    page = await phone.new_page()
    await page.goto(link(daemon, "s1", rid, "alice"))
    await page.get_by_label("eu", exact=True).check()
    await page.get_by_label("ap", exact=True).check()
    await page.get_by_label("Other", exact=True).check()  # Other is one of the choices
    await page.locator('input[name="q0.text"]').fill("mars")
    await page.locator('textarea[name="q1.text"]').fill("ship it after lunch")
    await page.get_by_role("button", name="Send answer").click()
    await expect(page.locator(".outcome")).to_have_text("Thank you: your answer was sent.")
    # The outcome says how it ended, never what was answered (a link can be shared).
    await expect(page.locator("main")).not_to_contain_text("mars")
    await expect(page.locator("main")).not_to_contain_text("after lunch")
    body = (await asyncio.wait_for(agent, 10)).json()
    assert body["answers"] == {"Which regions?": ["eu", "ap", "mars"], "Any notes?": "ship it after lunch"}
    assert (body["answeredBy"], body["via"]) == ("alice", "link")


async def test_decline_from_a_link(daemon: RunningDaemon, inbox: OpenInbox, phone: Any) -> None:
    tab = await inbox("alice")
    rid = (await daemon.ask("s1", "alice", [q("Deploy?", "Yes", "No")]))["requestId"]
    await expect(tab.panel(rid)).to_be_visible(timeout=WAIT_MS)
    page = await phone.new_page()
    await page.goto(link(daemon, "s1", rid, "alice", 0))
    await page.get_by_text("Decline to answer").click()
    await page.get_by_label("Reason (optional)").fill("not my call")
    await page.get_by_role("button", name="Decline", exact=True).click()
    await expect(page.locator(".outcome")).to_have_text("You declined this question.")
    body = (await daemon.result("s1", rid)).json()
    assert (body["status"], body["reason"], body["answeredBy"], body["via"]) == ("declined", "not my call", "alice", "link")
    await expect(tab.panel(rid)).to_have_count(0, timeout=WAIT_MS)


async def test_the_page_fits_a_360_px_phone(daemon: RunningDaemon, phone: Any, tmp_path: Any) -> None:
    long_label = "A rather long option label that has to wrap on a narrow phone screen " * 2
    questions = [q("Pick one. " + "Words that go on and on. " * 20, "Yes", long_label, header="A long header")]
    rid = (await daemon.ask("s1", "alice", questions))["requestId"]
    page = await phone.new_page()
    for url in (link(daemon, "s1", rid, "alice", 1), link(daemon, "s1", rid, "alice")):
        await page.goto(url)
        assert await page.evaluate("() => document.documentElement.scrollWidth") <= PHONE["width"]
        button = page.locator("button.primary")
        box = await button.bounding_box()
        assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= PHONE["width"] and box["height"] >= 40
        styled = await page.evaluate("() => getComputedStyle(document.querySelector('button.primary')).fontWeight")
        assert styled == "600"  # the stylesheet loaded under the page's CSP
        await page.screenshot(path=str(tmp_path / f"link-{url[-6:]}.png"), full_page=True)
