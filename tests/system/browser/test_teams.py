"""Teams, more time and declining on the page, against a real daemon: whom
a panel was asked of (before and after an escalation step), *More time*
moving the countdown in every tab, *Decline* closing the panel for every
member, and who answered or declined on a closed panel."""

from __future__ import annotations

import asyncio
import re
from datetime import datetime
from typing import Any

import pytest
from playwright.async_api import expect

from tests.system.browser.conftest import WAIT_MS, OpenInbox
from tests.conftest import RunningDaemon, eventually, q
from tests.receipts.independent import receipted

pytestmark = pytest.mark.browser

VIEWPORT = {"width": 1000, "height": 760}


def at(iso: str) -> float:
    return datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp()


async def set_group(daemon: RunningDaemon, group: str, *members: str) -> None:
    r = await daemon.admin("PUT", f"/admin/v1/groups/{group}", json={"members": list(members)})
    assert r.status_code == 200, r.text


async def ask_to(daemon: RunningDaemon, session: str, to: list[str], question: str = "Deploy now?", **body: Any) -> str:
    r = await daemon.http.post(
        f"{daemon.url}/v1/sessions/{session}/questions",
        json={"to": to, "questions": [q(question, "yes", "no")], **body},
        headers=daemon.agent_headers,
    )
    assert r.status_code == 201, r.text
    rid: str = r.json()["requestId"]
    return rid


async def test_a_panel_says_whom_it_was_asked_of_and_follows_an_escalation_step(
    daemon: RunningDaemon, inbox: OpenInbox
) -> None:
    await set_group(daemon, "oncall", "alice")
    await set_group(daemon, "leads", "carol")
    alice, carol = await inbox("alice"), await inbox("carol")
    alice_zh = await inbox("alice", query="lang=zh-CN")

    own = (await daemon.ask("s0", "alice", [q("Mine alone?")]))["requestId"]
    await expect(alice.panel(own).locator(".audience")).to_have_text("Asked of you")
    both = await ask_to(daemon, "s1", ["alice", "group:leads"], "Both?")
    await expect(alice.panel(both).locator(".audience")).to_have_text("Asked of you and leads")
    await expect(carol.panel(both).locator(".audience")).to_have_text("Asked of alice and leads")

    # A step a few seconds on: time enough to see the panel before it.
    rid = await ask_to(daemon, "s2", ["group:oncall"], timeoutSeconds=60, escalate=[{"afterSeconds": 3, "to": ["group:leads"]}])
    await expect(alice.panel(rid).locator(".audience")).to_have_text("Asked of oncall")
    await expect(alice_zh.panel(rid).locator(".audience")).to_have_text("提问对象：oncall")
    await expect(carol.panel(rid)).to_have_count(0)

    # The step: carol is asked, and alice's open panel says so, in both languages.
    escalated = "Asked of oncall, escalated to leads"
    await expect(carol.panel(rid).locator(".audience")).to_have_text(escalated, timeout=WAIT_MS + 3000)
    await expect(alice.panel(rid).locator(".audience")).to_have_text(escalated)
    await expect(alice_zh.panel(rid).locator(".audience")).to_have_text("提问对象：oncall，已升级至 leads")
    await alice.shot("escalated")
    # A refresh says the same (the re-push carries the step).
    await alice.page.reload()
    await alice.connected()
    await expect(alice.panel(rid).locator(".audience")).to_have_text(escalated)

    # carol answers: alice's page says who, in either language.
    waiting = asyncio.create_task(daemon.result("s2", rid, wait=20))
    await carol.panel(rid).get_by_label("yes", exact=True).check()
    await carol.panel(rid).get_by_role("button", name="Submit").click()
    result = (await asyncio.wait_for(waiting, 10)).json()
    assert (result["status"], result["answeredBy"], result["via"], result["escalations"]) == ("answered", "carol", "ws", 1)
    await expect(alice.note(rid).locator(".note-text")).to_have_text("Answered by carol.")
    await expect(alice_zh.note(rid).locator(".note-text")).to_have_text("已由 carol 回答。")
    await expect(carol.note(rid).locator(".note-text")).to_have_text("Answered. The agent has your answer.")


async def test_answered_by_bob_on_alices_page_and_by_an_admin(daemon: RunningDaemon, inbox: OpenInbox) -> None:
    await set_group(daemon, "oncall", "alice", "bob")
    alice, bob = await inbox("alice"), await inbox("bob")
    rid = await ask_to(daemon, "s1", ["group:oncall"])
    await expect(alice.panel(rid).locator(".audience")).to_have_text("Asked of oncall")
    await bob.panel(rid).get_by_label("no", exact=True).check()
    await bob.panel(rid).get_by_role("button", name="Submit").click()
    await expect(alice.note(rid).locator(".note-text")).to_have_text("Answered by bob.")
    await alice.shot("answered-by-bob")

    rid = await ask_to(daemon, "s1", ["group:oncall"], "Roll back?")
    await expect(alice.panel(rid)).to_be_visible()
    r = await daemon.admin("POST", f"/admin/v1/sessions/s1/questions/{rid}/answer", json={"answers": {"Roll back?": "no"}})
    assert r.status_code == 200, r.text
    await expect(alice.note(rid).locator(".note-text")).to_have_text("Answered by an admin.")


async def test_more_time_moves_the_countdown_in_every_tab_and_a_refusal_says_why(
    daemon: RunningDaemon, inbox: OpenInbox, browser: Any
) -> None:
    first, second = await inbox("alice"), await inbox("alice")
    # A third tab that never hears of extensions (its socket drops those
    # frames): it still offers more time after the allowance is used up.
    stale_ctx = await browser.new_context(viewport=VIEWPORT)

    def drop_extended(ws: Any) -> None:
        server = ws.connect_to_server()
        server.on_message(lambda message: None if "ask_user_questions_extended" in str(message) else ws.send(message))

    await stale_ctx.route_web_socket(re.compile(r"/ws(\?|$)"), drop_extended)
    stale = await inbox("alice", context=stale_ctx)

    asked = await daemon.ask("s1", "alice", [q("Deploy?", "yes", "no")], timeoutSeconds=60, maxExtensionSeconds=330)
    rid = asked["requestId"]
    more = [tab.panel(rid).get_by_role("button", name=re.compile("^More time")) for tab in (first, second, stale)]
    for button in more:
        await expect(button).to_have_text("More time (+5:00)")
    clock = second.panel(rid).locator("time")
    await expect(clock).to_have_attribute("datetime", asked["expiresAt"])

    await more[0].click()
    await expect(first.panel(rid).locator(".status")).to_contain_text("More time given")
    moved = (await daemon.result("s1", rid)).json()["expiresAt"]
    assert at(moved) - at(asked["expiresAt"]) == pytest.approx(300, abs=0.01)
    # The other tab's countdown moved, and it offers what is left.
    await expect(clock).to_have_attribute("datetime", moved)
    await expect(clock).to_have_text(re.compile(r"^(6:00|5:5\d) left$"))
    for button in more[:2]:
        await expect(button).to_have_text("More time (+0:30)")
    await second.shot("more-time")

    await more[1].click()  # the last 30 s: no tab that heard of it offers more
    for button in more[:2]:
        await expect(button).to_be_hidden()
    last = (await daemon.result("s1", rid)).json()["expiresAt"]
    assert at(last) - at(asked["expiresAt"]) == pytest.approx(330, abs=0.01)
    await expect(clock).to_have_attribute("datetime", last)

    # The tab that missed it asks, and is told why not.
    await expect(more[2]).to_be_visible()
    await more[2].click()
    status = stale.panel(rid).locator(".status")
    await expect(status).to_have_text("No more time: the time this question allows is used up.")
    await expect(more[2]).to_be_hidden()
    assert (await daemon.result("s1", rid)).json()["expiresAt"] == last


async def test_decline_with_a_reason_closes_the_panel_for_every_member_and_the_agent_gets_it(
    daemon: RunningDaemon, inbox: OpenInbox
) -> None:
    await set_group(daemon, "oncall", "alice", "bob")
    alice1, alice2, bob = await inbox("alice"), await inbox("alice"), await inbox("bob")
    alice_zh = await inbox("alice", query="lang=zh-CN")
    rid = await ask_to(daemon, "s1", ["group:oncall"])
    for tab in (alice1, alice2, bob, alice_zh):
        await expect(tab.panel(rid)).to_be_visible()
    waiting = asyncio.create_task(daemon.result("s1", rid, wait=20))
    await eventually(lambda: daemon.agent_waiting(rid), what="the agent waits")

    panel = bob.panel(rid)
    await panel.get_by_role("button", name="Decline", exact=True).click()
    reason = panel.get_by_label("Why you decline (optional)")
    await expect(reason).to_be_focused()
    await reason.fill("not my service")
    await bob.shot("decline-reason")
    await panel.get_by_role("button", name="Decline question").click()

    result = (await asyncio.wait_for(waiting, 10)).json()
    assert receipted(result) == {
        "requestId": rid, "sessionId": "s1", "status": "declined", "answeredBy": "bob", "via": "ws", "reason": "not my service"
    }
    for tab in (alice1, alice2):
        await expect(tab.panel(rid)).to_have_count(0)
        await expect(tab.note(rid).locator(".note-text")).to_have_text("Declined by bob: not my service")
    await expect(alice_zh.note(rid).locator(".note-text")).to_have_text("bob 已拒绝回答：not my service")
    await expect(bob.note(rid).locator(".note-text")).to_have_text("Declined. The agent was told.")
    await alice1.shot("declined-by-bob")


async def test_decline_without_a_reason_by_enter_and_keep_closes_the_field(daemon: RunningDaemon, inbox: OpenInbox) -> None:
    tab, other = await inbox("alice"), await inbox("alice")
    rid = (await daemon.ask("s1", "alice", [q("Deploy?", "yes", "no")]))["requestId"]
    panel = tab.panel(rid)
    await panel.get_by_role("button", name="Decline", exact=True).click()
    await panel.get_by_role("button", name="Keep it").click()
    await expect(panel.get_by_label("Why you decline (optional)")).to_be_hidden()
    await expect(panel.get_by_role("button", name="Decline", exact=True)).to_be_focused()
    assert (await daemon.result("s1", rid)).json()["status"] == "pending"

    await panel.get_by_role("button", name="Decline", exact=True).click()
    await panel.get_by_label("Why you decline (optional)").press("Enter")
    await expect(tab.note(rid).locator(".note-text")).to_have_text("Declined. The agent was told.")
    await expect(other.note(rid).locator(".note-text")).to_have_text("You declined it in another tab.")
    result = (await daemon.result("s1", rid)).json()
    assert (result["status"], result["answeredBy"]) == ("declined", "alice") and "reason" not in result


async def test_the_open_decline_box_shows_one_decline_control_and_says_whom_it_ends_for(
    daemon: RunningDaemon, inbox: OpenInbox
) -> None:
    await set_group(daemon, "oncall", "alice", "bob")
    tab, tab_zh = await inbox("alice"), await inbox("alice", query="lang=zh-CN")
    team = await ask_to(daemon, "s1", ["group:oncall"], escalate=[{"afterSeconds": 600, "to": ["carol"]}])
    alone = (await daemon.ask("s2", "alice", [q("Deploy?", "yes", "no")]))["requestId"]
    declines = re.compile("^Decline")
    for rid, says in (
        (team, "Declining ends the question for everyone it was asked of, including anyone added by escalation"),
        (alone, "Declining ends the question; the agent is told"),
    ):
        panel = tab.panel(rid)
        await expect(panel.get_by_role("button", name=declines)).to_have_count(1)  # closed: *Decline*
        await panel.get_by_role("button", name="Decline", exact=True).click()
        await expect(panel.get_by_role("button", name=declines)).to_have_count(1)  # open: *Decline question* alone
        await expect(panel.get_by_role("button", name="Decline question")).to_be_visible()
        await expect(panel.locator(".decline-who")).to_contain_text(says)
        await expect(panel.get_by_label("Why you decline (optional)")).to_have_accessible_description(re.compile(says))
        await panel.get_by_role("button", name="Keep it").click()
        await expect(panel.get_by_role("button", name="Decline", exact=True)).to_be_focused()
    zh = tab_zh.panel(team)
    await zh.get_by_role("button", name="拒绝回答", exact=True).click()
    await expect(zh.locator(".decline-who")).to_contain_text("包括通过升级加入的人")
    await expect(zh.get_by_role("button", name="拒绝回答", exact=True)).to_be_hidden()


async def test_a_member_removed_from_the_group_sees_why_the_panel_closed(daemon: RunningDaemon, inbox: OpenInbox) -> None:
    await set_group(daemon, "oncall", "alice", "bob")
    alice = await inbox("alice")
    rid = await ask_to(daemon, "s1", ["group:oncall"])
    await expect(alice.panel(rid)).to_be_visible()
    await set_group(daemon, "oncall", "bob")
    await expect(alice.note(rid).locator(".note-text")).to_have_text("No longer asked of you: the group changed.")


async def test_a_team_panel_with_more_time_and_decline_fits_a_360_px_phone(
    daemon: RunningDaemon, inbox: OpenInbox, browser: Any
) -> None:
    await set_group(daemon, "oncall", "alice")
    await set_group(daemon, "platform-leads", "carol")
    ctx = await browser.new_context(viewport={"width": 360, "height": 740}, is_mobile=True, has_touch=True)
    tab = await inbox("alice", context=ctx)
    rid = await ask_to(
        daemon, "s1", ["group:oncall", "alice"], "Roll the canary back to the last green build?",
        timeoutSeconds=600, maxExtensionSeconds=900, escalate=[{"afterSeconds": 0.2, "to": ["group:platform-leads"]}],
    )
    panel = tab.panel(rid)
    await expect(panel.locator(".audience")).to_have_text("Asked of you and oncall, escalated to platform-leads")
    await panel.get_by_role("button", name="Decline", exact=True).click()
    await panel.get_by_label("Why you decline (optional)").fill("I am not on call tonight")
    controls = [
        panel.get_by_role("button", name=re.compile("^More time")),
        panel.get_by_label("Why you decline (optional)"),
        panel.get_by_role("button", name="Decline question"),
        panel.get_by_role("button", name="Keep it"),
        panel.get_by_role("button", name="Submit"),
    ]
    for control in controls:
        await expect(control).to_be_visible()
        box = await control.bounding_box()
        assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= 360, (await control.text_content(), box)
    assert await tab.page.evaluate("() => document.documentElement.scrollWidth") <= 360
    await tab.shot("team-panel-phone")
