"""The page's History view (protocol section 19) against a real daemon, in
English and Chinese, at desktop and phone widths: a question answered, one
declined, one answered by an admin and one timed out, listed newest first
with their labels and titles; the list loading again when a question ends
while it is open; the stand-in for an end askd kept no title of; the empty
and error states; and the screenshot docs/web.md shows."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from playwright.async_api import expect

from tests.system.browser.conftest import OpenInbox, Tab
from tests.system.browser.test_approvals import DESKTOP, PHONE, fits
from tests.conftest import RunningDaemon, eventually, q

pytestmark = pytest.mark.browser

DOCS_SHOT = Path(__file__).resolve().parents[3] / "docs" / "img" / "history.png"
UPDATE_DOCS_SHOT = os.environ.get("ASKD_UPDATE_SCREENSHOT") == "1"  # read at import: the fixtures clear ASKD_*

# What each language says: the tabs, the statuses, who and through what.
WORDS = {
    "en": {
        "history": "History",
        "inbox": "Inbox",
        "refresh": "Refresh",
        "retry": "Try again",
        "statuses": ["Timed out", "Answered", "Declined", "Answered"],
        "by": [None, "By an admin, through the admin API", "By you, through the inbox page", "By you, through the inbox page"],
        "untitled": "A question (its text is no longer kept)",
        "error": "Could not load your history: the daemon cannot be reached",
        "empty": "No history yet",
    },
    "zh-CN": {
        "history": "历史",
        "inbox": "收件箱",
        "refresh": "刷新",
        "retry": "重试",
        "statuses": ["已超时", "已回答", "已拒绝", "已回答"],
        "by": [None, "由管理员通过管理 API", "由你通过收件箱页面", "由你通过收件箱页面"],
        "untitled": "一个问题（其文本已不再保留）",
        "error": "无法加载你的历史：无法连接守护进程",
        "empty": "暂无历史",
    },
}
CASES = [
    pytest.param("en", DESKTOP, id="en-desktop"),
    pytest.param("zh-CN", DESKTOP, id="zh-desktop"),
    pytest.param("en", PHONE, id="en-phone"),
    pytest.param("zh-CN", PHONE, id="zh-phone"),
]


async def open_at(inbox: OpenInbox, browser: Any, user: str, lang: str, viewport: dict[str, int], **kw: Any) -> Tab:
    ctx = await browser.new_context(viewport=viewport, is_mobile=viewport is PHONE, has_touch=viewport is PHONE, **kw)
    return await inbox(user, context=ctx, query=f"lang={lang}")


async def ended(daemon: RunningDaemon, session: str, rid: str) -> bool:
    r = await daemon.result(session, rid)
    return bool(r.json()["status"] != "pending")


async def acked(tab: Any, frame: dict[str, Any]) -> bool:
    """Send ``frame`` from a user's socket; askd's verdict on it (other frames skipped)."""
    await tab.send(frame)
    while True:
        got = await tab.recv()
        if got["type"] in ("ack", "error") and got.get("id") == frame["id"]:
            return bool(got["type"] == "ack" and got["payload"]["accepted"])


def answer(session: str, rid: str, answers: dict[str, Any]) -> dict[str, Any]:
    return {"type": "ask_user_questions_result", "sessionId": session, "requestId": rid, "answers": answers, "id": f"a-{rid}"}


async def four_ends(
    daemon: RunningDaemon,
    user: str = "alice",
    sessions: tuple[str, ...] = ("s1", "s2", "s3", "s4"),
    notes: str = "<b>ship it</b>\nsecond line",
) -> list[str]:
    """Answered (by the user, two questions), declined (by the user), answered by an admin, timed out: in that order."""
    tab = await daemon.connect(user)
    one, two, three, four = sessions
    answered = (await daemon.ask(one, user, [q("Deploy **api** 1.42?", "yes", "no"), q("Release notes?")]))["requestId"]
    assert await acked(tab, answer(one, answered, {"Deploy **api** 1.42?": "yes", "Release notes?": notes}))
    declined = (await daemon.ask(two, user, [q("Drop the staging database?")]))["requestId"]
    assert await acked(tab, {"type": "decline", "sessionId": two, "requestId": declined, "reason": "not mine", "id": "d"})
    by_admin = (await daemon.ask(three, user, [q("Which region?", "eu-west-1", "us-east-1")]))["requestId"]
    path = f"/admin/v1/sessions/{three}/questions/{by_admin}/answer"
    r = await daemon.admin("POST", path, json={"answers": {"Which region?": "eu-west-1"}})
    assert r.status_code == 200, r.text
    timed_out = (await daemon.ask(four, user, [q("Rotate the keys now?")], timeoutSeconds=0.5))["requestId"]
    for session, rid in zip(sessions, (answered, declined, by_admin, timed_out)):
        await eventually(lambda s=session, r=rid: ended(daemon, s, r), what=f"{rid} ended")
    await tab.close()
    return [timed_out, by_admin, declined, answered]  # newest first


@pytest.mark.parametrize(("lang", "viewport"), CASES)
async def test_history_lists_each_end_with_its_labels(
    daemon: RunningDaemon, inbox: OpenInbox, browser: Any, lang: str, viewport: dict[str, int]
) -> None:
    words = WORDS[lang]
    newest_first = await four_ends(daemon)
    tab = await open_at(inbox, browser, "alice", lang, viewport)
    page = tab.page
    # Keyboard: the History tab is a button, reached and pressed like one.
    history_tab = page.get_by_role("button", name=words["history"], exact=True)
    await history_tab.focus()
    await page.keyboard.press("Enter")
    await expect(history_tab).to_have_attribute("aria-pressed", "true")
    await expect(page.locator("#inbox-view")).to_be_hidden()
    items = page.locator("#history-list > li.hist")
    await expect(items).to_have_count(4)
    assert [await li.get_attribute("data-request-id") for li in await items.all()] == newest_first
    await expect(items.locator(".hist-status")).to_have_text(words["statuses"])
    for li, by in zip(await items.all(), words["by"]):
        await expect(li.locator(".hist-by")).to_have_count(0 if by is None else 1)
        if by is not None:
            await expect(li.locator(".hist-by")).to_have_text(by)
    timed_out, by_admin, declined, answered = await items.all()
    # Each is named by the title askd's history keeps, answers or none (its text is gone once it ends).
    await expect(timed_out.locator(".hist-title")).to_have_text("Rotate the keys now?")
    await expect(declined.locator(".hist-title")).to_have_text("Drop the staging database?")
    await expect(by_admin.locator(".hist-title")).to_have_text("Which region?")
    await expect(by_admin.locator("dd")).to_have_text("eu-west-1")
    await expect(answered.locator(".hist-title")).to_have_text("Deploy api 1.42?")  # Markdown's plain text
    await expect(answered.locator("dt")).to_have_text(["Deploy api 1.42?", "Release notes?"])
    # A person's answer is text: markup in it shows as typed, and makes no element.
    await expect(answered.locator("dd")).to_have_text(["yes", "<b>ship it</b>\nsecond line"])
    await expect(answered.locator("dd b")).to_have_count(0)
    await expect(answered).to_have_accessible_name("Deploy api 1.42?")
    stamp = answered.locator("time")
    assert (await stamp.get_attribute("datetime") or "").endswith("Z") and (await stamp.inner_text()).strip()
    await fits(tab)
    await tab.shot(f"history-{lang}-{viewport['width']}")

    # A question that ends while the view is open: the list loads again, and names it by its header.
    ws = await daemon.connect("alice")
    rid = (await daemon.ask("s5", "alice", [q("Delete the old **logs**?", header="Logs")]))["requestId"]
    await expect(tab.panel(rid)).to_be_attached()
    assert await acked(ws, {"type": "decline", "sessionId": "s5", "requestId": rid, "id": "d5"})
    await expect(items).to_have_count(5)
    await expect(items.first).to_have_attribute("data-request-id", rid)
    await expect(items.first.locator(".hist-title")).to_have_text("Logs")
    await expect(items.first.locator(".hist-status")).to_have_text(words["statuses"][2])

    # Back to the inbox, by keyboard too.
    inbox_tab = page.get_by_role("button", name=words["inbox"], exact=True)
    await inbox_tab.focus()
    await page.keyboard.press("Enter")
    await expect(page.locator("#history")).to_be_hidden()
    await expect(page.locator("#inbox-view")).to_be_visible()
    await expect(inbox_tab).to_have_attribute("aria-pressed", "true")


@pytest.mark.parametrize("lang", ["en", "zh-CN"])
async def test_the_empty_and_the_error_states(daemon: RunningDaemon, inbox: OpenInbox, browser: Any, lang: str) -> None:
    words = WORDS[lang]
    tab = await open_at(inbox, browser, "bob", lang, PHONE)
    page = tab.page
    await page.get_by_role("button", name=words["history"], exact=True).click()
    await expect(page.locator("#history-empty .empty-title")).to_have_text(words["empty"])
    await expect(page.locator("li.hist")).to_have_count(0)

    await page.route("**/v1/me/history", lambda route: route.abort())
    await page.get_by_role("button", name=words["refresh"], exact=True).click()
    await expect(page.get_by_role("alert").filter(has_text=words["error"])).to_be_visible()
    await expect(page.locator("#history-empty")).to_be_hidden()
    await page.unroute("**/v1/me/history")

    await page.get_by_role("button", name=words["retry"], exact=True).click()
    await expect(page.locator("#history-error")).to_be_hidden()
    await expect(page.locator("#history-empty")).to_be_visible()
    # Ends while the view is open: it loads again without a click.
    await four_ends(daemon, "bob", ("b1", "b2", "b3", "b4"))
    await expect(page.locator("li.hist")).to_have_count(4)
    await expect(page.locator("#history-empty")).to_be_hidden()
    await fits(tab)


async def test_a_refused_fetch_says_askds_reason(daemon: RunningDaemon, inbox: OpenInbox) -> None:
    tab = await inbox("alice")
    await tab.page.route(
        "**/v1/me/history",
        lambda route: route.fulfill(
            status=400, content_type="application/json",
            body='{"error": {"code": "invalid_request", "message": "store \'memory\' keeps no audit trail yet"}}',
        ),
    )
    await tab.page.get_by_role("button", name="History", exact=True).click()
    await expect(tab.page.locator("#history-error-text")).to_have_text(
        "Could not load your history: store 'memory' keeps no audit trail yet"
    )


@pytest.mark.parametrize("lang", ["en", "zh-CN"])
async def test_an_end_from_before_titles_is_named_by_its_answer_else_a_stand_in(
    daemon: RunningDaemon, inbox: OpenInbox, browser: Any, lang: str
) -> None:
    """An end indexed before askd kept titles has ``header: null`` (a SQLite
    file migrated with ends in it): its first answer's question names it
    while askd keeps the answers, else the stand-in says its text is gone."""
    tab = await open_at(inbox, browser, "alice", lang, DESKTOP)
    entry = {"sessionId": "s1", "header": None, "answeredBy": None, "via": None, "endedAt": "2026-12-01T10:00:00.000Z"}
    body = {
        "questions": [
            {**entry, "requestId": "old-1", "status": "timeout", "answers": None},
            {**entry, "requestId": "old-2", "status": "answered", "answers": {"Deploy **api**?": "yes"}},
        ]
    }
    await tab.page.route("**/v1/me/history", lambda route: route.fulfill(status=200, content_type="application/json", body=json.dumps(body)))
    await tab.page.get_by_role("button", name=WORDS[lang]["history"], exact=True).click()
    await expect(tab.page.locator(".hist-title")).to_have_text([WORDS[lang]["untitled"], "Deploy api?"])


async def test_screenshot_for_the_docs(daemon: RunningDaemon, inbox: OpenInbox, browser: Any) -> None:
    """docs/web.md's picture of the History view (written with ASKD_UPDATE_SCREENSHOT=1)."""
    viewport = {"width": 900, "height": 700}
    tab = await open_at(inbox, browser, "alice", "en", viewport, color_scheme="light", timezone_id="Europe/Berlin")
    # Each named by the title askd's history keeps.
    await four_ends(daemon, "alice", ("deploy-7f3a", "db-cleanup", "infra-42", "keys-rotate"), "Ship it.\nThe changelog is ready.")
    await tab.page.get_by_role("button", name="History", exact=True).click()
    await expect(tab.page.locator("li.hist")).to_have_count(4)
    await expect(tab.page.locator(".hist-title")).to_have_text(
        ["Rotate the keys now?", "Which region?", "Drop the staging database?", "Deploy api 1.42?"]
    )
    path = await tab.shot("docs-history")
    if UPDATE_DOCS_SHOT:
        await tab.page.locator("main").screenshot(path=str(DOCS_SHOT))
    assert path.stat().st_size > 0
