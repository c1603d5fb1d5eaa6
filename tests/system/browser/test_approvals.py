"""The page's approval panel (protocol section 17) against a real daemon, at
desktop and phone widths: approve, deny with a reason, edit the arguments
through a parse error and a schema error to a fix, a quorum's progress in
two browsers, and the screenshot docs/web.md shows."""

from __future__ import annotations

import asyncio
import os
import re
from pathlib import Path
from typing import Any

import pytest
from playwright.async_api import expect

from tests.system.browser.conftest import OpenInbox, Tab
from tests.conftest import RunningDaemon

pytestmark = pytest.mark.browser

DESKTOP = {"width": 1000, "height": 760}
PHONE = {"width": 390, "height": 844}
WIDTHS = [pytest.param(DESKTOP, id="desktop"), pytest.param(PHONE, id="phone")]
DOCS_SHOT = Path(__file__).resolve().parents[3] / "docs" / "img" / "approval.png"
UPDATE_DOCS_SHOT = os.environ.get("ASKD_UPDATE_SCREENSHOT") == "1"  # read at import: the fixtures clear ASKD_*

DIFF = """```diff
--- a/deploy/prod.yaml
+++ b/deploy/prod.yaml
@@ -3,4 +3,4 @@ service: api
 replicas: 3
-image: api:1.41.2
+image: api:1.42.0
 region: eu-west-1
```"""

SCHEMA = {
    "type": "object",
    "properties": {
        "service": {"type": "string"},
        "version": {"type": "string", "pattern": r"^\d+\.\d+\.\d+$"},
        "replicas": {"type": "integer", "minimum": 1, "maximum": 10},
    },
    "required": ["service", "version", "replicas"],
    "additionalProperties": False,
}


def action(**extra: Any) -> dict[str, Any]:
    return {
        "name": "deploy",
        "arguments": {"service": "api", "version": "1.42.0", "replicas": 3},
        "summary": "Roll **api** forward to 1.42.0 in production.",
        "preview": DIFF,
        "schema": SCHEMA,
        **extra,
    }


async def ask_action(daemon: RunningDaemon, session: str, who: dict[str, Any], **body: Any) -> str:
    r = await daemon.http.post(
        f"{daemon.url}/v1/sessions/{session}/questions",
        json={**who, "action": action(**body.pop("action", {})), **body},
        headers=daemon.agent_headers,
    )
    assert r.status_code == 201, r.text
    rid: str = r.json()["requestId"]
    return rid


async def open_at(inbox: OpenInbox, browser: Any, user: str, viewport: dict[str, int]) -> Tab:
    ctx = await browser.new_context(viewport=viewport, is_mobile=viewport is PHONE, has_touch=viewport is PHONE)
    return await inbox(user, context=ctx)


async def fits(tab: Tab) -> None:
    """Nothing sticks out sideways: the page never scrolls horizontally."""
    wide = await tab.page.evaluate("() => document.documentElement.scrollWidth - document.documentElement.clientWidth")
    assert wide <= 0, f"the page is {wide}px wider than the screen"


@pytest.mark.parametrize("viewport", WIDTHS)
async def test_approve_shows_the_action_and_the_agent_gets_approved(
    daemon: RunningDaemon, inbox: OpenInbox, browser: Any, viewport: dict[str, int]
) -> None:
    tab = await open_at(inbox, browser, "alice", viewport)
    rid = await ask_action(daemon, "s1", {"userId": "alice"}, action={"allowAlways": True})
    panel = tab.panel(rid)
    await expect(panel.locator(".action-name")).to_have_text("deploy")
    await expect(panel.locator(".action-summary strong")).to_have_text("api")
    # The diff: added and removed lines marked, the + and - kept.
    await expect(panel.locator(".action-preview .diff-add")).to_have_text("+image: api:1.42.0")
    await expect(panel.locator(".action-preview .diff-del")).to_have_text("-image: api:1.41.2")
    await expect(panel.locator(".args-json")).to_contain_text('"version": "1.42.0"')
    await expect(panel.locator(".args-edit")).to_have_count(0)  # not editable
    await expect(panel.get_by_role("button", name="Approve always")).to_be_visible()
    await expect(panel.locator(".progress")).to_be_hidden()  # a quorum of one
    await fits(tab)
    await tab.shot(f"approval-{viewport['width']}")

    waiting = asyncio.create_task(daemon.result("s1", rid, wait=20))
    await panel.get_by_role("button", name="Approve", exact=True).click()
    await expect(tab.note(rid).locator(".note-text")).to_have_text("Approved. The agent may go ahead.")
    result = (await asyncio.wait_for(waiting, 10)).json()
    assert result["status"] == "answered" and result["approved"] is True
    assert result["scope"] == "once" and result["edited"] is False
    assert [a["by"] for a in result["approvals"]] == ["alice"]


async def test_approve_always_is_offered_only_when_the_action_allows_it(daemon: RunningDaemon, inbox: OpenInbox) -> None:
    tab = await inbox("alice")
    plain = await ask_action(daemon, "s1", {"userId": "alice"})
    await expect(tab.panel(plain).get_by_role("button", name="Approve", exact=True)).to_be_enabled()
    await expect(tab.panel(plain).get_by_role("button", name="Approve always")).to_be_hidden()
    always = await ask_action(daemon, "s2", {"userId": "alice"}, action={"allowAlways": True})
    waiting = asyncio.create_task(daemon.result("s2", always, wait=20))
    await tab.panel(always).get_by_role("button", name="Approve always").click()
    result = (await asyncio.wait_for(waiting, 10)).json()
    assert result["approved"] is True and result["scope"] == "always"


@pytest.mark.parametrize("viewport", WIDTHS)
async def test_deny_with_a_reason(daemon: RunningDaemon, inbox: OpenInbox, browser: Any, viewport: dict[str, int]) -> None:
    tab = await open_at(inbox, browser, "alice", viewport)
    zh = await inbox("alice", query="lang=zh-CN")
    rid = await ask_action(daemon, "s1", {"userId": "alice"})
    await expect(zh.panel(rid).get_by_role("button", name="批准", exact=True)).to_be_visible()
    panel = tab.panel(rid)
    await panel.get_by_role("button", name="Deny", exact=True).click()
    await panel.get_by_label("Why you deny it (optional)").fill("not during the freeze")
    await fits(tab)
    waiting = asyncio.create_task(daemon.result("s1", rid, wait=20))
    await panel.get_by_role("button", name="Deny action").click()
    await expect(tab.note(rid).locator(".note-text")).to_have_text("Denied. The agent was told.")
    await expect(zh.note(rid).locator(".note-text")).to_have_text("你已在另一个标签页中拒绝。")
    result = (await asyncio.wait_for(waiting, 10)).json()
    assert result["status"] == "declined" and result["approved"] is False
    assert result["reason"] == "not during the freeze"


@pytest.mark.parametrize("viewport", WIDTHS)
async def test_edit_through_a_parse_and_a_schema_error_then_approve(
    daemon: RunningDaemon, inbox: OpenInbox, browser: Any, viewport: dict[str, int]
) -> None:
    tab = await open_at(inbox, browser, "alice", viewport)
    rid = await ask_action(daemon, "s1", {"userId": "alice"}, action={"editable": True})
    panel = tab.panel(rid)
    editor = panel.get_by_label("Arguments (JSON; you may edit them before approving)")
    approve = panel.get_by_role("button", name="Approve", exact=True)
    error = panel.locator(".args-error")
    await expect(editor).to_have_value('{\n  "service": "api",\n  "version": "1.42.0",\n  "replicas": 3\n}')
    await expect(approve).to_be_enabled()

    await editor.fill('{"service": "api", "version": "1.42.0", "replicas": 3')
    await expect(error).to_contain_text("Not valid JSON")
    await expect(approve).to_be_disabled()
    await expect(editor).to_have_attribute("aria-invalid", "true")

    await editor.fill('{"service": "api", "version": "1.42.0", "replicas": 30}')
    await expect(error).to_contain_text("arguments/replicas")
    await expect(approve).to_be_disabled()
    await editor.fill('{"service": "api", "version": "latest", "replicas": 2}')
    await expect(error).to_contain_text("arguments/version")
    await fits(tab)
    await tab.shot(f"approval-schema-error-{viewport['width']}")

    await editor.fill('{"service": "api", "version": "1.42.1", "replicas": 2}')
    await expect(error).to_be_hidden()
    await expect(approve).to_be_enabled()
    waiting = asyncio.create_task(daemon.result("s1", rid, wait=20))
    await approve.click()
    await expect(tab.note(rid).locator(".note-text")).to_have_text("Approved. The agent may go ahead.")
    result = (await asyncio.wait_for(waiting, 10)).json()
    assert result["approved"] is True and result["edited"] is True
    assert result["arguments"] == {"service": "api", "version": "1.42.1", "replicas": 2}


async def test_a_refusal_from_askd_is_shown_in_the_panel(daemon: RunningDaemon, inbox: OpenInbox) -> None:
    """askd checks the arguments itself: what the browser could not check (no schema here) askd refuses clearly."""
    tab = await inbox("alice")
    r = await daemon.http.post(
        f"{daemon.url}/v1/sessions/s1/questions",
        json={"userId": "alice", "action": {"name": "run", "arguments": {"cmd": "ls"}, "editable": True}},
        headers=daemon.agent_headers,
    )
    rid = r.json()["requestId"]
    panel = tab.panel(rid)
    await panel.locator(".args-edit").fill("[1, 2]")
    await expect(panel.locator(".args-error")).to_have_text("The arguments must be a JSON object ({…}).")
    await expect(panel.get_by_role("button", name="Approve", exact=True)).to_be_disabled()


@pytest.mark.parametrize("viewport", WIDTHS)
async def test_quorum_progress_in_two_browsers(
    daemon: RunningDaemon, inbox: OpenInbox, browser: Any, viewport: dict[str, int]
) -> None:
    r = await daemon.admin("PUT", "/admin/v1/groups/oncall", json={"members": ["alice", "bob"]})
    assert r.status_code == 200, r.text
    alice = await open_at(inbox, browser, "alice", viewport)
    bob = await open_at(inbox, browser, "bob", viewport)
    rid = await ask_action(daemon, "s1", {"to": ["group:oncall"]}, quorum=2)
    await expect(alice.panel(rid).locator(".progress")).to_have_text("2 approvals needed")
    await expect(bob.panel(rid).locator(".progress")).to_have_text("2 approvals needed")

    await alice.panel(rid).get_by_role("button", name="Approve", exact=True).click()
    await expect(bob.panel(rid).locator(".progress")).to_have_text("1 of 2 approvals: alice")
    await expect(alice.panel(rid).locator(".progress")).to_have_text("1 of 2 approvals: you")
    await expect(alice.panel(rid).locator(".status")).to_contain_text("Waiting for the others")
    await expect(alice.panel(rid).get_by_role("button", name="Approve", exact=True)).to_be_disabled()
    await expect(alice.panel(rid).get_by_role("button", name="Deny", exact=True)).to_be_enabled()
    await fits(bob)
    await bob.shot(f"quorum-{viewport['width']}")

    # A refresh shows the approvals so far (the re-push carries them).
    await bob.page.reload()
    await bob.connected()
    await expect(bob.panel(rid).locator(".progress")).to_have_text("1 of 2 approvals: alice")

    waiting = asyncio.create_task(daemon.result("s1", rid, wait=20))
    await bob.panel(rid).get_by_role("button", name="Approve", exact=True).click()
    await expect(bob.note(rid).locator(".note-text")).to_have_text("Approved. The agent may go ahead.")
    await expect(alice.note(rid).locator(".note-text")).to_have_text("Approved by bob.")
    await expect(alice.panel(rid)).to_have_count(0)
    result = (await asyncio.wait_for(waiting, 10)).json()
    assert result["approved"] is True
    assert [a["by"] for a in result["approvals"]] == ["alice", "bob"]


async def test_already_voted_and_not_pending_are_said_in_the_panel(daemon: RunningDaemon, inbox: OpenInbox) -> None:
    """What the page did not hear yet (the tab's socket loses askd's voted and
    ended events here): *Approve* after this user approved elsewhere gets
    already_voted, said in the panel; after the approval ended, not_pending
    closes the panel with a note."""
    r = await daemon.admin("PUT", "/admin/v1/groups/oncall", json={"members": ["alice", "bob"]})
    assert r.status_code == 200, r.text
    tab = await inbox("alice")

    def route(ws: Any) -> None:
        server = ws.connect_to_server()
        ws.on_message(lambda m: server.send(m))
        server.on_message(lambda m: None if "ask_user_questions_voted" in m or "ask_user_questions_cancelled" in m else ws.send(m))

    await tab.page.route_web_socket(re.compile(r"/ws"), route)
    await tab.page.reload()
    await tab.connected()
    rid = await ask_action(daemon, "s1", {"to": ["group:oncall"]}, quorum=2)
    panel = tab.panel(rid)
    approve = panel.get_by_role("button", name="Approve", exact=True)
    await expect(approve).to_be_enabled()
    elsewhere = await daemon.connect("alice")
    await elsewhere.send({"type": "approve", "sessionId": "s1", "requestId": rid, "id": "a1"})
    assert (await elsewhere.expect("ack"))["payload"]["accepted"] is True

    await approve.click()
    await expect(panel.locator(".status")).to_have_text(
        "You have already approved this. Waiting for the others; you may still deny it."
    )
    await expect(approve).to_be_disabled()
    await expect(panel.get_by_role("button", name="Deny", exact=True)).to_be_enabled()

    other = await ask_action(daemon, "s2", {"to": ["group:oncall"]})
    await expect(tab.panel(other)).to_have_count(1)
    bob = await daemon.connect("bob")
    await bob.send({"type": "decline", "sessionId": "s2", "requestId": other, "id": "d1"})
    assert (await bob.expect("ack"))["payload"]["accepted"] is True
    await tab.panel(other).get_by_role("button", name="Approve", exact=True).click()
    await expect(tab.note(other).locator(".note-text")).to_have_text(
        "Already closed (answered elsewhere, timed out or cancelled)."
    )


async def test_screenshot_for_the_docs(daemon: RunningDaemon, inbox: OpenInbox, browser: Any) -> None:
    """docs/web.md's picture of an approval with a diff preview (written with ASKD_UPDATE_SCREENSHOT=1)."""
    r = await daemon.admin("PUT", "/admin/v1/groups/oncall", json={"members": ["alice", "bob"]})
    assert r.status_code == 200, r.text
    ctx = await browser.new_context(viewport={"width": 900, "height": 700}, color_scheme="light")
    tab = await inbox("alice", context=ctx)
    rid = await ask_action(daemon, "deploy-7f3a", {"to": ["group:oncall"]}, quorum=2, timeoutSeconds=900)
    bob = await daemon.connect("bob")
    await bob.send({"type": "approve", "sessionId": "deploy-7f3a", "requestId": rid, "id": "a1"})
    await expect(tab.panel(rid).locator(".progress")).to_have_text("1 of 2 approvals: bob")
    path = await tab.shot("docs-approval")
    if UPDATE_DOCS_SHOT:
        await tab.page.locator("main").screenshot(path=str(DOCS_SHOT))
    assert path.stat().st_size > 0
