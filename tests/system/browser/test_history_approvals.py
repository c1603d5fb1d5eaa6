"""The History view says what happened to approvals (protocol sections 17
and 19) against a real daemon, in English and Chinese: approved, denied and
timed out, by whom and through what, with the action's name; "The answers
are no longer kept" only for a question whose answers were kept and are
gone (an approval has none). askd's history does not say which ended
questions were approvals: the page knows those this tab was shown, and
claims nothing of the others (after a reload)."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.async_api import expect

from tests.system.browser.conftest import OpenInbox
from tests.conftest import RunningDaemon, eventually, q

pytestmark = pytest.mark.browser

WORDS = {
    "en": {
        "statuses": ["Timed out", "Answered", "Denied", "Approved"],
        "generic": ["Timed out", "Answered", "Declined", "Answered"],
        "by": "By you, through the inbox page",
        "gone": "The answers are no longer kept.",
        "history": "History",
    },
    "zh-CN": {
        "statuses": ["已超时", "已回答", "已拒绝", "已批准"],
        "generic": ["已超时", "已回答", "已拒绝", "已回答"],
        "by": "由你通过收件箱页面",
        "gone": "答案已不再保留。",
        "history": "历史",
    },
}


@pytest.fixture
def settings_overrides() -> dict[str, Any]:
    return {"result_ttl_seconds": 0.5}  # an ended question's answers are gone half a second after its end


async def ask_action(daemon: RunningDaemon, session: str, name: str, **body: Any) -> str:
    action = {"name": name, "summary": f"Run **{name}** now.", "arguments": {"n": 1}}
    r = await daemon.http.post(
        f"{daemon.url}/v1/sessions/{session}/questions",
        json={"userId": "alice", "action": action, **body},
        headers=daemon.agent_headers,
    )
    assert r.status_code == 201, r.text
    return str(r.json()["requestId"])


async def gone(daemon: RunningDaemon, session: str, rid: str) -> bool:
    return (await daemon.result(session, rid)).status_code == 404


@pytest.mark.parametrize("lang", ["en", "zh-CN"])
async def test_approvals_say_approved_denied_or_timed_out_with_the_actions_name(
    daemon: RunningDaemon, inbox: OpenInbox, lang: str
) -> None:
    words = WORDS[lang]
    tab = await inbox("alice", query=f"lang={lang}")
    page = tab.page
    approved = await ask_action(daemon, "s1", "drop_table")
    await tab.panel(approved).locator("button[type=submit]").click()
    await expect(tab.note(approved)).to_be_visible()
    denied = await ask_action(daemon, "s2", "deploy")
    await tab.panel(denied).locator(".decline-open").click()
    await tab.panel(denied).locator(".decline-send").click()
    await expect(tab.note(denied)).to_be_visible()
    answered = (await daemon.ask("s3", "alice", [q("Ship it?", "yes", "no")]))["requestId"]
    await tab.panel(answered).get_by_label("yes").check()
    await tab.panel(answered).locator("button[type=submit]").click()
    await expect(tab.note(answered)).to_be_visible()
    timed_out = await ask_action(daemon, "s4", "rotate_keys", timeoutSeconds=0.3)
    await expect(tab.note(timed_out)).to_be_visible()
    await eventually(lambda: gone(daemon, "s3", answered), what="the answers forgotten")

    await page.get_by_role("button", name=words["history"], exact=True).click()
    items = page.locator("#history-list > li.hist")
    await expect(items).to_have_count(4)
    assert [await li.get_attribute("data-request-id") for li in await items.all()] == [timed_out, answered, denied, approved]
    await expect(items.locator(".hist-status")).to_have_text(words["statuses"])
    last, question, no, yes = await items.all()
    for li, name in ((last, "rotate_keys"), (no, "deploy"), (yes, "drop_table")):
        await expect(li).to_have_attribute("data-kind", "approval")
        await expect(li.locator(".hist-action code")).to_have_text(name)
        await expect(li.locator(".hist-gone")).to_have_count(0)  # an approval carries no answers
    await expect(yes.locator(".hist-title")).to_have_text("Run drop_table now.")
    await expect(yes.locator(".hist-by")).to_have_text(words["by"])
    await expect(no.locator(".hist-by")).to_have_text(words["by"])
    await expect(question.locator(".hist-gone")).to_have_text(words["gone"])  # kept, then gone
    await expect(question.locator(".hist-action")).to_have_count(0)

    # A new tab was shown none of them: it says how each ended in the plain words, and claims no answers gone.
    await page.reload()
    await tab.connected()
    await page.get_by_role("button", name=words["history"], exact=True).click()
    await expect(items).to_have_count(4)
    await expect(items.locator(".hist-status")).to_have_text(words["generic"])
    await expect(page.locator(".hist-gone")).to_have_count(0)
    await expect(page.locator(".hist-action")).to_have_count(0)
