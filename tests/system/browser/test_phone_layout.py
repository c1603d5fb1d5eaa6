"""The approval panel on a phone (390×844) and a laptop (1280×800), checked
by element geometry in Chromium against a real daemon, with three approvals
waiting: scrolling down the page, each action's name, summary and the
preview's first lines are seen before its *Approve* is; no action bar lies
over a panel's header; a long session id keeps one line and its title says
it whole; the arguments box that scrolls sideways shows a shade and wraps
on demand; the preview's *Copy* shares the caption's row; the top bar keeps
its height while reconnecting. The screenshots are kept (tmp_path, and
ASKD_KEEP_SHOTS=DIR copies them there) and were looked at."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import pytest
from playwright.async_api import expect

from tests.system.browser.conftest import OpenInbox, Tab
from tests.system.browser.test_approvals import DIFF, SCHEMA
from tests.conftest import RunningDaemon

pytestmark = pytest.mark.browser

PHONE = {"width": 390, "height": 844}
LAPTOP = {"width": 1280, "height": 800}
KEEP = os.environ.get("ASKD_KEEP_SHOTS")  # read at import: the fixtures clear ASKD_*
LONG_SESSION = "codex-019a7f3e-5b2c-7d41-9e8f-0a1b2c3d4e5f"

DROP = {
    "name": "drop_table",
    "summary": "Drop the table **orders_archive** from the production database.",
    "preview": "```sql\nDROP TABLE orders_archive; -- 1.2 M rows, last written 2024-03-01, no foreign keys point at it\n```",
    "arguments": {"database": "prod-eu-west-1.db.internal.example.com", "table": "orders_archive", "cascade": False},
}
DEPLOY = {
    "name": "deploy",
    "summary": "Roll **api** forward to 1.42.0 in production.",
    "preview": DIFF,
    "arguments": {"service": "api", "version": "1.42.0", "replicas": 3},
    "schema": SCHEMA,
    "editable": True,
}
ROTATE = {
    "name": "rotate_keys",
    "summary": "Rotate the signing keys of the payments service.",
    "preview": "- the old key stays valid for 24 hours\n- the new key is published in the JWKS at once",
    "arguments": {"service": "payments", "overlap_hours": 24},
    "allowAlways": True,
}


async def three_approvals(daemon: RunningDaemon) -> list[str]:
    rids = []
    for session, action, quorum in ((LONG_SESSION, DROP, 1), ("s2", DEPLOY, 1), ("s2", ROTATE, 2)):
        r = await daemon.http.post(
            f"{daemon.url}/v1/sessions/{session}/questions",
            json={"to": ["alice", "bob"], "action": action, "quorum": quorum},
            headers=daemon.agent_headers,
        )
        assert r.status_code == 201, r.text
        rids.append(r.json()["requestId"])
    return rids


async def open_at(inbox: OpenInbox, browser: Any, viewport: dict[str, int], **kw: Any) -> Tab:
    phone = viewport is PHONE
    ctx = await browser.new_context(viewport=viewport, is_mobile=phone, has_touch=phone, **kw)
    return await inbox("alice", context=ctx)


async def keep(tab: Tab, name: str, *, full_page: bool = True) -> Path:
    path = tab.shots / f"{name}.png"
    # Panels fade in as they arrive: shot once they have (the pulsing dot never ends, so it is left out).
    await tab.page.evaluate(
        "() => Promise.all(document.getAnimations().filter((a) => a.effect?.getTiming().iterations !== Infinity).map((a) => a.finished))"
    )
    await tab.page.screenshot(path=str(path), full_page=full_page)
    if KEEP:
        Path(KEEP).mkdir(parents=True, exist_ok=True)
        shutil.copy(path, Path(KEEP) / path.name)
    return path


# What a person sees of each panel at one scroll position: an element is
# seen when its centre is on screen, below the top bar, and nothing lies
# over it there (a pinned bar over a header fails this).
SEEN = """() => {
  const bar = document.querySelector('.topbar').getBoundingClientRect().bottom;
  const seen = (el) => {
    if (!el) return false;
    const r = el.getBoundingClientRect();
    const x = r.left + Math.min(r.width / 2, 40), y = r.top + Math.min(r.height / 2, 12);
    if (r.width === 0 || y < bar || y > innerHeight) return false;
    const hit = document.elementFromPoint(x, y);
    return hit !== null && (el === hit || el.contains(hit));
  };
  const rect = (el) => { const r = el.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; };
  return [...document.querySelectorAll('form.panel')].map((p) => ({
    id: p.dataset.requestId,
    name: seen(p.querySelector('.action-name')),
    summary: seen(p.querySelector('.action-summary')),
    preview: seen(p.querySelector('.action-preview .preview-body')),
    approve: seen(p.querySelector('button[type=submit]')),
    head: rect(p.querySelector('.panel-head')),
    actionHead: rect(p.querySelector('.action-head')),
    foot: rect(p.querySelector('.panel-foot')),
  }));
}"""


def overlap(a: list[float], b: list[float]) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


@pytest.mark.parametrize("viewport", [pytest.param(PHONE, id="phone"), pytest.param(LAPTOP, id="laptop")])
async def test_each_action_is_seen_before_its_approve_and_no_bar_covers_a_header(
    daemon: RunningDaemon, inbox: OpenInbox, browser: Any, viewport: dict[str, int]
) -> None:
    tab = await open_at(inbox, browser, viewport)
    rids = await three_approvals(daemon)
    page = tab.page
    for rid in rids:
        await expect(tab.panel(rid).locator(".action-name")).to_be_visible()
    await page.mouse.move(0, 0)
    width = viewport["width"]
    await keep(tab, f"three-approvals-{width}")
    await keep(tab, f"three-approvals-{width}-screen", full_page=False)

    first: dict[str, dict[str, int]] = {rid: {} for rid in rids}
    bottom = await page.evaluate("() => document.documentElement.scrollHeight - innerHeight")
    for y in [*range(0, bottom, 20), bottom]:
        await page.evaluate("(y) => window.scrollTo(0, y)", y)
        for panel in await page.evaluate(SEEN):
            for what in ("name", "summary", "preview", "approve"):
                if panel[what]:
                    first[panel["id"]].setdefault(what, y)
            # No action bar over any panel's header, its own or another's.
            for other in await page.evaluate(SEEN):
                for head in ("head", "actionHead"):
                    assert not overlap(panel["foot"], other[head]), (y, panel["id"], other["id"], head)
    for rid in rids:
        seen = first[rid]
        assert {"name", "summary", "preview", "approve"} <= set(seen), (rid, seen)
        assert seen["name"] <= seen["summary"] <= seen["approve"], (rid, seen)
        assert seen["preview"] <= seen["approve"], (rid, seen)


async def test_a_long_session_id_keeps_one_line_and_its_title_says_it_whole(
    daemon: RunningDaemon, inbox: OpenInbox, browser: Any
) -> None:
    tab = await open_at(inbox, browser, PHONE)
    await three_approvals(daemon)
    head = tab.page.locator(f'section.session[data-session-id="{LONG_SESSION}"] .session-head')
    ident = head.locator(".session-id")
    await expect(ident).to_have_attribute("title", LONG_SESSION)
    await expect(ident).to_have_text(LONG_SESSION)  # whole for a screen reader; cut on screen
    box = await head.bounding_box()
    line = await ident.bounding_box()
    assert box is not None and line is not None
    assert box["height"] < 2 * line["height"] + 4, box  # one row, not three wrapped columns
    assert await ident.evaluate("(el) => el.scrollWidth > el.clientWidth")  # cut, with "…"
    await ident.click()  # a tap unfolds it
    assert not await ident.evaluate("(el) => el.scrollWidth > el.clientWidth")


async def test_arguments_that_overflow_show_a_shade_and_wrap_on_demand(
    daemon: RunningDaemon, inbox: OpenInbox, browser: Any
) -> None:
    tab = await open_at(inbox, browser, PHONE)
    drop = (await three_approvals(daemon))[0]
    panel = tab.panel(drop)
    box = panel.get_by_role("region", name="Arguments of drop_table")
    await expect(box).to_be_visible()
    assert await box.evaluate("(el) => el.scrollWidth > el.clientWidth")
    # The shade at the edge: gradients, two that stay put while the content scrolls (and two that cover them at the ends).
    style = await box.evaluate("(el) => [getComputedStyle(el).backgroundImage, getComputedStyle(el).backgroundAttachment]")
    assert style[0].count("linear-gradient") == 4 and style[1].split(", ").count("local") == 2, style
    wrap = panel.get_by_role("button", name="Wrap lines")
    await wrap.click()
    await expect(wrap).to_have_attribute("aria-pressed", "true")
    assert not await box.evaluate("(el) => el.scrollWidth > el.clientWidth")
    await expect(box).to_contain_text("prod-eu-west-1.db.internal.example.com")


async def test_the_previews_copy_shares_the_captions_row(daemon: RunningDaemon, inbox: OpenInbox, browser: Any) -> None:
    tab = await open_at(inbox, browser, PHONE)
    deploy = (await three_approvals(daemon))[1]
    preview = tab.panel(deploy).get_by_role("region", name="What deploy will change")
    copy = preview.get_by_role("button", name="Copy")
    caption = preview.locator(".preview-caption")
    c, k = await copy.bounding_box(), await caption.bounding_box()
    assert c is not None and k is not None
    assert abs((c["y"] + c["height"] / 2) - (k["y"] + k["height"] / 2)) < 8, (c, k)


async def test_the_top_bar_keeps_its_height_while_reconnecting(daemon: RunningDaemon, inbox: OpenInbox, browser: Any) -> None:
    tab = await open_at(inbox, browser, PHONE, base_url=daemon.url)
    bar = tab.page.locator(".topbar")
    connected = await bar.bounding_box()
    await tab.page.context.set_offline(True)
    await daemon.admin("POST", "/admin/v1/disconnect", json={"userId": "alice", "mode": "abort"})
    await expect(tab.conn).to_have_attribute("data-state", "waiting")
    await expect(tab.page.locator("#conn-text")).to_have_text("Offline, reconnecting")
    waiting = await bar.bounding_box()
    await keep(tab, "reconnecting-390", full_page=False)
    await tab.page.context.set_offline(False)
    await tab.connected()
    assert connected is not None and waiting is not None
    assert waiting["height"] == connected["height"], (connected, waiting)
