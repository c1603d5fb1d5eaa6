"""axe-core (vendored: tests/system/browser/vendor) in Chromium against a real
daemon: no violation of WCAG 2.0/2.1 A and AA nor of axe's best practices on
the inbox (three approvals and a question with previews), the History view
and the answer link pages (a question's form, an approval, the reply to a
submission), at 390×844 and 1280×800. And the keyboard: no sticky element
covers the control that has focus, Escape closes the Deny reason box, and
the live region announces one summary on load, not one line per question."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from playwright.async_api import expect

from tests.system.browser.conftest import OpenInbox, Tab
from tests.system.browser.test_phone_layout import LAPTOP, LONG_SESSION, PHONE, three_approvals
from tests.conftest import RunningDaemon, q
from tests.system.links.conftest import PUBLIC_URL, link
from tests.system.links.test_approvals import ask_action

pytestmark = pytest.mark.browser

AXE = (Path(__file__).parent / "vendor" / "axe.min.js").read_text(encoding="utf-8")
TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "best-practice"]
WIDTHS = [pytest.param(PHONE, id="390"), pytest.param(LAPTOP, id="1280")]
# The rules' findings, one line each: the rule, its help, and where.
RUN_AXE = """async (tags) => {
  await Promise.all(document.getAnimations().filter((a) => a.effect?.getTiming().iterations !== Infinity).map((a) => a.finished));
  const result = await axe.run(document, { runOnly: { type: 'tag', values: tags }, resultTypes: ['violations'] });
  return result.violations.flatMap((v) => v.nodes.map((n) => `${v.id}: ${v.help} at ${n.target.join(' ')}: ${n.failureSummary}`));
}"""


@pytest.fixture
def settings_overrides() -> dict[str, Any]:
    return {"public_url": PUBLIC_URL}


async def violations(page: Any) -> list[str]:
    await page.evaluate(AXE)  # through the debugger, as the page's policy allows no script of ours
    found: list[str] = await page.evaluate(RUN_AXE, TAGS)
    return found


async def open_at(inbox: OpenInbox, browser: Any, viewport: dict[str, int]) -> Tab:
    phone = viewport is PHONE
    ctx = await browser.new_context(viewport=viewport, is_mobile=phone, has_touch=phone)
    return await inbox("alice", context=ctx)


async def a_question_with_previews(daemon: RunningDaemon) -> str:
    options = [
        {"label": "Patch A", "description": "Smaller", "preview": "```diff\n-a = 1\n+a = 2\n```"},
        {"label": "Patch B", "description": "Safer", "preview": "```python\nprint('b' * 200)\n```"},
    ]
    asked = await daemon.ask("s3", "alice", [{"question": "Which **patch**?", "header": "Patch", "options": options}, q("Notes?")])
    return str(asked["requestId"])


@pytest.mark.parametrize("viewport", WIDTHS)
async def test_the_inbox_has_no_axe_violation(daemon: RunningDaemon, inbox: OpenInbox, browser: Any, viewport: dict[str, int]) -> None:
    tab = await open_at(inbox, browser, viewport)
    rids = [*await three_approvals(daemon), await a_question_with_previews(daemon)]
    for rid in rids:
        await expect(tab.panel(rid)).to_be_visible()
    # The Deny reason box open, as a person reads it.
    await tab.panel(rids[0]).get_by_role("button", name="Deny", exact=True).click()
    assert await violations(tab.page) == []


@pytest.mark.parametrize("viewport", WIDTHS)
async def test_history_has_no_axe_violation(daemon: RunningDaemon, inbox: OpenInbox, browser: Any, viewport: dict[str, int]) -> None:
    tab = await open_at(inbox, browser, viewport)
    page = tab.page
    drop, deploy, rotate = await three_approvals(daemon)
    await tab.panel(drop).get_by_role("button", name="Approve", exact=True).click()
    await tab.panel(deploy).get_by_role("button", name="Deny", exact=True).click()
    await tab.panel(deploy).get_by_role("button", name="Deny action").click()
    for rid in (drop, deploy):  # closed before the next arrives: no panel moves under a click
        await expect(tab.note(rid)).to_be_visible()
    question = await a_question_with_previews(daemon)
    # By keyboard: a tap in Chromium's phone emulation lands on the option's row, not on its radio.
    await tab.panel(question).get_by_label("Patch B").focus()
    await page.keyboard.press("Space")
    await expect(tab.panel(question).get_by_label("Patch B")).to_be_checked()
    await tab.panel(question).get_by_role("button", name="Submit").click()
    timed_out = (await daemon.ask("s4", "alice", [q("Rotate now?")], timeoutSeconds=0.3))["requestId"]
    for rid in (question, timed_out):
        await expect(tab.note(rid)).to_be_visible()
    await page.get_by_role("button", name="History", exact=True).click()
    await expect(page.locator("#history-list > li")).to_have_count(4)
    assert await violations(page) == []
    assert rotate


@pytest.mark.parametrize("viewport", WIDTHS)
async def test_the_link_pages_have_no_axe_violation(daemon: RunningDaemon, browser: Any, viewport: dict[str, int]) -> None:
    ctx = await browser.new_context(viewport=viewport, is_mobile=viewport is PHONE)
    page = await ctx.new_page()
    try:
        question = await a_question_with_previews(daemon)
        action = await ask_action(daemon, ["alice"], allowAlways=True)
        one_tap = (await daemon.ask("s5", "alice", [q("Which database?", "SQLite", "PostgreSQL")]))["requestId"]
        pages = {
            "form": link(daemon, "s3", question),
            "one tap": link(daemon, "s5", one_tap, "alice", 1),
            "approval": link(daemon, "s1", action),
        }
        for name, url in pages.items():
            await page.goto(url)
            assert await violations(page) == [], name
        # The replies to a submission: what was taken, then how it ended.
        await page.goto(pages["one tap"])
        await page.get_by_role("button", name="Confirm").click()
        await expect(page.get_by_role("status")).to_contain_text("your answer was sent")
        assert await violations(page) == [], "the reply to an answer"
        await page.goto(pages["approval"])
        await page.locator("summary", has_text="Deny").click()
        await page.get_by_label("Reason (optional)").fill("not now")
        await page.get_by_role("button", name="Deny", exact=True).click()
        await expect(page.get_by_role("status")).to_contain_text("You denied this action.")
        assert await violations(page) == [], "the reply to a denial"
    finally:
        await ctx.close()


# Whether the focused control is the topmost element at its centre, or
# (taller than the screen) at the middle of what of it is on screen.
FOCUSED_UNCOVERED = """() => {
  const el = document.activeElement;
  const r = el.getBoundingClientRect();
  const top = Math.max(r.top, 0), bottom = Math.min(r.bottom, innerHeight);
  const x = r.left + Math.min(r.width / 2, 30), y = (top + bottom) / 2;
  const hit = document.elementFromPoint(x, y);
  return {ok: hit !== null && (hit === el || el.contains(hit)), what: el.outerHTML.slice(0, 80), hit: hit?.outerHTML.slice(0, 80)};
}"""


@pytest.mark.parametrize("viewport", WIDTHS)
async def test_no_sticky_element_covers_the_focused_control(
    daemon: RunningDaemon, inbox: OpenInbox, browser: Any, viewport: dict[str, int]
) -> None:
    tab = await open_at(inbox, browser, viewport)
    page = tab.page
    long_diff = "```diff\n" + "\n".join(f"+line {i}" for i in range(60)) + "\n```"
    r = await daemon.http.post(
        f"{daemon.url}/v1/sessions/s1/questions",
        json={
            "userId": "alice",
            "action": {
                "name": "migrate",
                "summary": "Run the migration.",
                "preview": long_diff,
                "arguments": {f"step{i}": i for i in range(14)},
                "editable": True,
            },
        },
        headers=daemon.agent_headers,
    )
    assert r.status_code == 201, r.text
    rid = r.json()["requestId"]
    await a_question_with_previews(daemon)
    await expect(tab.panel(rid).locator(".args-edit")).to_be_visible()
    await page.locator("#view-history").focus()
    stops = 0
    while stops < 80:
        await page.keyboard.press("Tab")
        stops += 1
        if not await page.evaluate("() => document.getElementById('inbox').contains(document.activeElement)"):
            if stops > 3:
                break
            continue
        # Where the browser scrolled focus to, and where a person reading down from its top would have it.
        for place in ("as focused", "at the top"):
            if place == "at the top":
                await page.evaluate(
                    "() => { const r = document.activeElement.getBoundingClientRect();"
                    " const bar = document.querySelector('.topbar').getBoundingClientRect().bottom;"
                    " window.scrollBy(0, r.top - bar - 4); }"
                )
            seen = await page.evaluate(FOCUSED_UNCOVERED)
            assert seen["ok"], (place, seen)
    assert stops > 5


async def test_escape_closes_the_deny_reason_box(daemon: RunningDaemon, inbox: OpenInbox) -> None:
    tab = await inbox("alice")
    rid = (await three_approvals(daemon))[0]
    panel = tab.panel(rid)
    deny = panel.get_by_role("button", name="Deny", exact=True)
    await deny.click()
    reason = panel.get_by_label("Why you deny it (optional)")
    await expect(reason).to_be_focused()
    await reason.fill("not now")
    await tab.page.keyboard.press("Escape")
    await expect(reason).to_be_hidden()
    await expect(deny).to_be_focused()
    await expect(deny).to_have_attribute("aria-expanded", "false")
    assert (await daemon.result(LONG_SESSION, rid)).json()["status"] == "pending"


@pytest.mark.parametrize(("lang", "summary"), [("en", "5 waiting, 3 approvals"), ("zh-CN", "5 个待处理，其中 3 个待审批")])
async def test_the_live_region_announces_one_summary_on_load(
    daemon: RunningDaemon, inbox: OpenInbox, browser: Any, lang: str, summary: str
) -> None:
    await three_approvals(daemon)
    await daemon.ask("s6", "alice", [q("Ship it?", "yes", "no")])
    await daemon.ask("s7", "alice", [q("Why?")])
    # Every announcement is recorded from the page's first moment (an init
    # script, before the page's own code): an observer added after the load
    # raced the page's first summary.
    stored = {"origins": [{"origin": daemon.url.rstrip("/"), "localStorage": [{"name": "askd.token", "value": daemon.token("user", "alice")}]}]}
    ctx = await browser.new_context(viewport={"width": 1000, "height": 760}, storage_state=stored)
    await ctx.add_init_script(
        """window.__said = [];
        document.addEventListener('DOMContentLoaded', () => {
            const el = document.getElementById('announce');  // the inbox's; other pages have none
            if (el) new MutationObserver(() => window.__said.push(el.textContent))
                .observe(el, {childList: true, characterData: true, subtree: true});
        });"""
    )
    tab = await inbox("alice", query=f"lang={lang}", connected=False, context=ctx)
    page = tab.page
    await expect(page.locator("form.panel")).to_have_count(5)
    await expect(page.locator("#announce")).to_have_text(summary)
    assert await page.evaluate("() => window.__said") == [summary]
    # One more arriving later is named on its own.
    asked = await daemon.ask("s8", "alice", [q("Deploy now?", "yes", "no")])
    await expect(tab.panel(asked["requestId"])).to_be_visible()
    new = "New question: Deploy now?" if lang == "en" else "新问题：Deploy now?"
    await expect(page.locator("#announce")).to_have_text(new)
    await ctx.close()
