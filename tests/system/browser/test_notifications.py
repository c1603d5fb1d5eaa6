"""Browser notifications, the title and the favicon (spec E), in Chromium.

The context is granted the notifications permission; an init script wraps
``Notification`` so each one raised is recorded on the Python side (which
outlives a refresh), and lets a test say the page is out of sight (hidden
and unfocused), which a headless browser cannot be made to be for real."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest
from playwright.async_api import expect

from tests.system.browser.conftest import OpenInbox, Tab
from tests.conftest import QUIET, RunningDaemon, eventually, q

pytestmark = pytest.mark.browser

RECORDER = """
(() => {
  const Real = window.Notification;
  window.__notes = [];
  class Recorded extends EventTarget {
    constructor(title, options = {}) {
      super();
      Object.assign(this, { title, body: options.body, tag: options.tag, closed: false });
      window.__notes.push(this);
      window.__recordNotification(title, options.body ?? '', options.tag ?? '');
    }
    close() {
      if (this.closed) return;
      this.closed = true;
      window.__recordClose(this.tag);
      this.dispatchEvent(new Event('close'));
    }
    static get permission() { return Real.permission; }
    static requestPermission() {
      window.__recordPermissionAsk();
      return Real.requestPermission();
    }
  }
  window.Notification = Recorded;
  // Out of sight survives a refresh, so a reloaded page starts away.
  window.__away = sessionStorage.getItem('test.away') === '1';
  const proto = Document.prototype;
  Object.defineProperty(proto, 'visibilityState', { get() { return window.__away ? 'hidden' : 'visible'; }, configurable: true });
  Object.defineProperty(proto, 'hidden', { get() { return window.__away; }, configurable: true });
  proto.hasFocus = function () { return !window.__away; };
  window.__focusCalls = 0;
  const realFocus = window.focus.bind(window);
  window.focus = () => { window.__focusCalls += 1; realFocus(); };
})();
"""


@dataclass
class Recorder:
    raised: list[dict[str, str]] = field(default_factory=list)
    closed: list[str] = field(default_factory=list)
    permission_asks: int = 0


async def new_context(browser: Any, daemon: RunningDaemon, *, grant: bool = True) -> tuple[Any, Recorder]:
    rec = Recorder()
    ctx = await browser.new_context(viewport={"width": 1000, "height": 600})
    if grant:
        await ctx.grant_permissions(["notifications"], origin=daemon.url)
    await ctx.expose_function("__recordNotification", lambda title, body, tag: rec.raised.append({"title": title, "body": body, "tag": tag}))
    await ctx.expose_function("__recordClose", lambda tag: rec.closed.append(tag))

    def asked() -> None:
        rec.permission_asks += 1

    await ctx.expose_function("__recordPermissionAsk", asked)
    await ctx.add_init_script(RECORDER)
    return ctx, rec


async def away(tab: Tab, value: bool = True) -> None:
    await tab.page.evaluate("(v) => { window.__away = v; sessionStorage.setItem('test.away', v ? '1' : '0'); }", value)


async def turn_on(tab: Tab) -> None:
    button = tab.page.get_by_role("button", name="Turn on notifications")
    await button.click()
    await expect(tab.page.get_by_role("button", name="Notifications on")).to_have_attribute("aria-pressed", "true")


@pytest.fixture
async def alerting(daemon: RunningDaemon, browser: Any, inbox: OpenInbox) -> tuple[Tab, Recorder]:
    """A connected tab with notifications turned on."""
    ctx, rec = await new_context(browser, daemon)
    tab = await inbox("alice", context=ctx)
    await turn_on(tab)
    return tab, rec


async def raised_count(rec: Recorder, n: int, tab: Tab) -> None:
    """Wait until ``n`` notifications were raised, then check no more come."""
    await eventually(lambda: len(rec.raised) >= n, what=f"{n} notifications")
    await tab.page.wait_for_timeout(QUIET * 1000)
    assert len(rec.raised) == n, rec.raised


async def test_permission_is_asked_only_on_a_click(daemon: RunningDaemon, browser: Any, inbox: OpenInbox) -> None:
    ctx, rec = await new_context(browser, daemon, grant=False)
    tab = await inbox("alice", context=ctx)
    button = tab.page.locator("#alerts")
    await expect(button).to_have_text("Turn on notifications")
    await expect(button).to_have_attribute("aria-pressed", "false")
    await tab.page.reload()
    await tab.connected()
    assert rec.permission_asks == 0  # never on load

    await button.click()  # headless Chromium answers the prompt with "denied"
    await eventually(lambda: rec.permission_asks == 1, what="the permission prompt")
    await expect(button).not_to_have_attribute("aria-pressed", "true")

    await ctx.grant_permissions(["notifications"], origin=daemon.url)  # the user allows it in the site settings
    await button.click()
    await expect(button).to_have_text("Notifications on")
    assert rec.permission_asks == 1  # granted already: no second prompt
    await tab.shot("notifications-on")


async def test_the_choice_is_remembered_per_browser(daemon: RunningDaemon, alerting: tuple[Tab, Recorder], inbox: OpenInbox) -> None:
    tab, rec = alerting
    assert await tab.page.evaluate("() => localStorage.getItem('askd.notifications')") == "on"
    await tab.page.reload()
    await tab.connected()
    await expect(tab.page.locator("#alerts")).to_have_text("Notifications on")
    other = await inbox("alice", context=tab.page.context)  # another tab of the same browser
    await expect(other.page.locator("#alerts")).to_have_text("Notifications on")
    await other.page.locator("#alerts").click()  # off, in every tab
    await expect(other.page.locator("#alerts")).to_have_text("Turn on notifications")
    await expect(tab.page.locator("#alerts")).to_have_text("Turn on notifications")
    await away(tab)
    await away(other)
    await daemon.ask("s1", "alice", [q("Deploy?", "yes", "no")])
    await expect(tab.page.locator("form.panel")).to_have_count(1)
    await raised_count(rec, 0, tab)


async def test_one_notification_for_a_new_question_while_away_none_while_looking(
    daemon: RunningDaemon, alerting: tuple[Tab, Recorder]
) -> None:
    tab, rec = alerting
    seen = await daemon.ask("s1", "alice", [q("Seen while looking?", "yes", "no")])
    await expect(tab.panel(seen["requestId"])).to_be_visible()
    await raised_count(rec, 0, tab)

    await away(tab)
    asked = await daemon.ask("s1", "alice", [q("Deploy to production?", "yes", "no", header="Deploy"), q("Why?")])
    await expect(tab.panel(asked["requestId"])).to_be_attached()
    await raised_count(rec, 1, tab)
    assert rec.raised == [{"title": "Deploy", "body": "Deploy to production? (+1 more)", "tag": f"askd-{asked['requestId']}"}]

    plain = await daemon.ask("s2", "alice", [q("Which database?")])
    await raised_count(rec, 2, tab)
    assert rec.raised[1]["title"] == "New question" and rec.raised[1]["body"] == "Which database?"
    assert plain["requestId"] in rec.raised[1]["tag"]


async def test_no_second_notification_after_a_reconnect_or_a_refresh(daemon: RunningDaemon, alerting: tuple[Tab, Recorder]) -> None:
    tab, rec = alerting
    await away(tab)
    first = await daemon.ask("s1", "alice", [q("Deploy?", "yes", "no")])
    await raised_count(rec, 1, tab)

    # The network drops; a question arrives meanwhile; the page comes back.
    await tab.page.context.set_offline(True)
    await daemon.admin("POST", "/admin/v1/disconnect", json={"userId": "alice", "mode": "abort"})
    await expect(tab.conn).not_to_have_attribute("data-state", "connected")
    second = await daemon.ask("s1", "alice", [q("Tag it?", "yes", "no")])
    await tab.page.context.set_offline(False)
    await tab.connected()
    await expect(tab.panel(second["requestId"])).to_be_attached()
    await raised_count(rec, 2, tab)  # the new one only: the re-push of the first is not news
    assert [n["tag"] for n in rec.raised] == [f"askd-{first['requestId']}", f"askd-{second['requestId']}"]

    await tab.page.reload()  # a fresh page, away from the start: it knows only what the browser kept
    await tab.connected()
    assert await tab.page.evaluate("() => document.hidden")
    await expect(tab.page.locator("form.panel")).to_have_count(2)
    await daemon.admin("POST", "/admin/v1/disconnect", json={"userId": "alice", "mode": "abort"})
    await tab.connected()
    await raised_count(rec, 2, tab)


async def test_clicking_a_notification_focuses_the_tab_at_its_question(daemon: RunningDaemon, alerting: tuple[Tab, Recorder]) -> None:
    tab, rec = alerting
    for i in range(6):  # enough panels that the last one is out of view
        await daemon.ask("s1", "alice", [q(f"Question {i}?", "yes", "no")])
    await expect(tab.page.locator("form.panel")).to_have_count(6)
    await away(tab)
    target = await daemon.ask("s2", "alice", [q("The one to answer?", "yes", "no")])
    panel = tab.panel(target["requestId"])
    await raised_count(rec, 1, tab)
    await expect(panel).not_to_be_in_viewport()
    await away(tab, False)
    await tab.page.evaluate("() => window.__notes[0].dispatchEvent(new Event('click'))")
    await expect(panel).to_be_focused()
    await expect(panel).to_be_in_viewport()
    assert await tab.page.evaluate("() => window.__focusCalls") == 1
    assert rec.closed == [f"askd-{target['requestId']}"]  # and the notification went away
    await tab.shot("notification-clicked")


async def test_a_question_that_ends_closes_its_notification(daemon: RunningDaemon, alerting: tuple[Tab, Recorder]) -> None:
    tab, rec = alerting
    await away(tab)
    asked = await daemon.ask("s1", "alice", [q("Deploy?", "yes", "no")])
    await raised_count(rec, 1, tab)
    r = await daemon.admin("POST", f"/admin/v1/sessions/s1/questions/{asked['requestId']}/answer", json={"answers": {"Deploy?": "yes"}})
    assert r.status_code == 200
    await eventually(lambda: rec.closed, what="the notification closed")
    assert rec.closed == [f"askd-{asked['requestId']}"]


async def test_the_waiting_count_is_in_the_title_and_on_the_favicon(daemon: RunningDaemon, inbox: OpenInbox) -> None:
    tab = await inbox("alice")
    icon = tab.page.locator('link[rel="icon"]')
    await expect(tab.page).to_have_title("askd inbox")
    plain = await icon.get_attribute("href")
    a = await daemon.ask("s1", "alice", [q("Deploy?", "yes", "no")])
    await expect(tab.page).to_have_title("(1) askd inbox")
    await expect(icon).to_have_attribute("href", _data_png())
    one = await icon.get_attribute("href")
    b = await daemon.ask("s2", "alice", [q("Tag?", "yes", "no")])
    await expect(tab.page).to_have_title("(2) askd inbox")
    await expect(icon).not_to_have_attribute("href", one or "")  # redrawn with the new count
    assert (await icon.get_attribute("href") or "").startswith("data:image/png;base64,")
    for asked, text in ((a, "Deploy?"), (b, "Tag?")):
        r = await daemon.admin(
            "POST", f"/admin/v1/sessions/{asked['sessionId']}/questions/{asked['requestId']}/answer", json={"answers": {text: "yes"}}
        )
        assert r.status_code == 200
    await expect(tab.page).to_have_title("askd inbox")
    await expect(icon).to_have_attribute("href", _ends_with("/static/favicon.svg"))
    assert plain == "static/favicon.svg"  # relative to the page: works under a proxy prefix


def _data_png() -> Any:
    import re

    return re.compile(r"^data:image/png;base64,")


def _ends_with(suffix: str) -> Any:
    import re

    return re.compile(re.escape(suffix) + "$")
