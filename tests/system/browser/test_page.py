"""The page itself: how it signs in and where its token lives, its security headers, and an
answer given while the network is down."""

from __future__ import annotations

import asyncio
import os
import shutil
from pathlib import Path

import jwt
import pytest
from playwright.async_api import expect

from tests.system.browser.conftest import OpenInbox
from askd.tokens import issue_open_code
from tests.conftest import SECRET, RunningDaemon, q

pytestmark = pytest.mark.browser

README_SHOT = Path(__file__).resolve().parents[3] / "docs" / "img" / "inbox.png"
# Read at import: the suite's autouse fixture clears ASKD_* before each test.
UPDATE_README_SHOT = os.environ.get("ASKD_UPDATE_SCREENSHOT") == "1"


async def test_security_headers_and_no_policy_violations(daemon: RunningDaemon, inbox: OpenInbox) -> None:
    tab = await inbox("alice", connected=False)  # the token is in this browser's storage
    response = await tab.page.goto(f"{daemon.url}/")
    assert response is not None
    headers = response.headers
    csp = headers["content-security-policy"]
    assert "script-src 'self'" in csp and "'unsafe-inline'" not in csp
    assert "frame-ancestors 'none'" in csp
    assert headers["x-content-type-options"] == "nosniff"
    assert headers["referrer-policy"] == "no-referrer"
    await tab.connected()  # the page's module scripts and styles load under that policy
    await daemon.ask("s1", "alice", [q("Deploy?", "yes", "no")])
    await expect(tab.page.locator("form.panel")).to_have_count(1)
    # The fixture fails the test on any CSP violation or uncaught error.


async def test_the_code_leaves_the_address_bar_and_its_token_stays_for_the_browser(
    daemon: RunningDaemon, inbox: OpenInbox
) -> None:
    tab = await inbox(None, connected=False)
    await tab.page.goto(f"{daemon.url}/?session=s1#code={issue_open_code(SECRET, 'alice', 600)}")
    await tab.connected()
    assert tab.page.url == f"{daemon.url}/?session=s1"
    token = await tab.page.evaluate("() => localStorage.getItem('askd.token')")
    assert jwt.decode(token, SECRET, algorithms=["HS256"])["sub"] == "alice"
    await expect(tab.page.locator("#who-name")).to_have_text("alice")
    await tab.page.reload()
    await tab.connected()
    await tab.page.go_back()  # the history entry was replaced: no URL with the code behind it
    assert "code=" not in tab.page.url
    # A link without a code (a webhook's, a notification's) opens in a new
    # tab of the same browser as a working inbox.
    other = await inbox(None, context=tab.page.context)
    await expect(other.page.locator("#who-name")).to_have_text("alice")
    # "Change token" forgets it for the whole browser.
    await other.page.get_by_role("button", name="Change token").click()
    await expect(other.page.locator("#token-form")).to_be_visible()
    assert await other.page.evaluate("() => localStorage.getItem('askd.token')") is None


@pytest.mark.parametrize("where", ["?session=s1&token={}", "?session=s1#token={}"])
async def test_a_token_in_the_address_is_not_read(daemon: RunningDaemon, inbox: OpenInbox, where: str) -> None:
    tab = await inbox(None, connected=False)
    token = daemon.token("user", "alice")
    await tab.page.goto(f"{daemon.url}/" + where.format(token))
    await expect(tab.page.locator("#token-form")).to_be_visible()
    await expect(tab.conn).to_have_attribute("data-state", "stopped")
    banner = tab.page.locator("#banner")
    await expect(banner).to_contain_text("A token in the page’s address is not accepted")
    await expect(banner.locator("code")).to_have_text("askd open --user YOU")  # a command, not `backticks`
    assert tab.page.url == f"{daemon.url}/?session=s1"  # not left in the address bar either
    assert await tab.page.evaluate("() => localStorage.getItem('askd.token')") is None
    assert (await daemon.admin("GET", "/admin/v1/connections?userId=alice")).json()["connections"] == []


async def test_a_used_link_says_so_and_names_the_command_as_code(daemon: RunningDaemon, inbox: OpenInbox) -> None:
    code = issue_open_code(SECRET, "alice", 600)
    assert (await daemon.http.post(f"{daemon.url}/v1/open", json={"code": code})).status_code == 200
    tab = await inbox(None, connected=False)
    await tab.page.goto(f"{daemon.url}/#code={code}")
    banner = tab.page.locator("#banner")
    await expect(banner).to_contain_text("This link did not log you in: this link was already used")
    assert "`" not in await banner.text_content()
    await expect(banner.locator("code")).to_have_text("askd open")
    assert "code=" not in tab.page.url


async def test_without_a_token_the_pill_says_so(daemon: RunningDaemon, inbox: OpenInbox) -> None:
    tab = await inbox(None, connected=False)
    await expect(tab.page.locator("#token-form")).to_be_visible()
    await expect(tab.page.locator("#conn-text")).to_have_text("No token")
    await expect(tab.conn).to_have_attribute("data-state", "stopped")


async def test_when_the_token_expires_the_page_asks_for_a_new_one(daemon: RunningDaemon, inbox: OpenInbox) -> None:
    # Long enough to outlast a cold browser's first page load (seconds on a busy machine).
    tab = await inbox(token=daemon.token("user", "alice", ttl=7))
    await expect(tab.page.locator("#token-form")).to_be_visible(timeout=11000)  # askd closed it with 4001
    await expect(tab.page.locator("#banner")).to_contain_text("expired or was revoked")
    await expect(tab.conn).to_have_attribute("data-state", "rejected")


async def test_without_a_token_the_page_asks_for_one(daemon: RunningDaemon, inbox: OpenInbox) -> None:
    tab = await inbox(None, connected=False)
    form = tab.page.locator("#token-form")
    await expect(form).to_be_visible()
    await expect(tab.page.get_by_label("User token")).to_be_focused()
    await tab.shot("token-form")
    await tab.page.get_by_label("User token").fill(daemon.token("user", "alice"))
    await tab.page.get_by_role("button", name="Connect").click()
    await tab.connected()
    await expect(form).to_be_hidden()
    asked = await daemon.ask("s1", "alice", [q("Deploy?", "yes", "no")])
    await expect(tab.panel(asked["requestId"])).to_be_visible()


async def test_a_refused_token_stops_retrying_and_says_why(daemon: RunningDaemon, inbox: OpenInbox) -> None:
    tab = await inbox(None, token=daemon.token("agent"), connected=False)
    await expect(tab.conn).to_have_attribute("data-state", "rejected")
    await expect(tab.page.locator("#banner")).to_contain_text("not a user token")

    tab = await inbox(None, token="not.a.jwt", connected=False)
    await expect(tab.conn).to_have_attribute("data-state", "rejected")
    await expect(tab.page.locator("#banner")).to_contain_text("refused this token")
    await expect(tab.page.locator("#token-form")).to_be_visible()


async def test_an_answer_given_offline_is_sent_when_the_connection_is_back(daemon: RunningDaemon, inbox: OpenInbox) -> None:
    tab = await inbox("alice")
    asked = await daemon.ask("s1", "alice", [q("Deploy?", "yes", "no")])
    rid = asked["requestId"]
    panel = tab.panel(rid)
    await expect(panel).to_be_visible()
    waiting = asyncio.create_task(daemon.result("s1", rid, wait=20))

    await tab.page.context.set_offline(True)  # new connections fail from here on
    await daemon.admin("POST", "/admin/v1/disconnect", json={"userId": "alice", "mode": "abort"})
    await expect(tab.conn).not_to_have_attribute("data-state", "connected")
    await expect(tab.page.locator("#conn-text")).to_have_text("Offline, reconnecting")  # the browser says it is offline
    await panel.get_by_label("no").check()
    await panel.get_by_role("button", name="Submit").click()
    await expect(panel.locator(".status")).to_contain_text("will be sent when the connection is back")
    await expect(panel).to_have_attribute("data-state", "queued")
    await tab.shot("offline-answer-queued")
    await asyncio.sleep(0.3)
    assert not waiting.done()

    await tab.page.context.set_offline(False)
    result = (await asyncio.wait_for(waiting, 10)).json()
    assert result["answers"] == {"Deploy?": "no"}
    await expect(tab.note(rid)).to_contain_text("Answered.")


async def test_a_question_that_ended_while_offline_closes_after_the_reconnect(daemon: RunningDaemon, inbox: OpenInbox) -> None:
    tab = await inbox("alice")
    gone = await daemon.ask("s1", "alice", [q("Deploy?", "yes", "no")])
    kept = await daemon.ask("s1", "alice", [q("Tag the release?", "yes", "no")])
    await expect(tab.panel(kept["requestId"])).to_be_visible()
    await tab.page.context.set_offline(True)
    await daemon.admin("POST", "/admin/v1/disconnect", json={"userId": "alice", "mode": "abort"})
    await expect(tab.conn).not_to_have_attribute("data-state", "connected")
    r = await daemon.admin("POST", f"/admin/v1/sessions/s1/questions/{gone['requestId']}/answer", json={"answers": {"Deploy?": "yes"}})
    assert r.status_code == 200
    await expect(tab.panel(gone["requestId"])).to_be_visible()  # the page cannot know yet

    await tab.page.context.set_offline(False)
    await tab.connected()
    await expect(tab.note(gone["requestId"])).to_contain_text("Closed while this page was offline")
    await expect(tab.panel(kept["requestId"])).to_be_visible()


README_DIFF = """```diff
--- a/billing/settings.py
+++ b/billing/settings.py
@@ -12,6 +12,8 @@ DATABASES = {
     "default": {
-        "ENGINE": "django.db.backends.sqlite3",
-        "NAME": BASE_DIR / "billing.sqlite3",
+        "ENGINE": "django.db.backends.postgresql",
+        "NAME": "billing",
+        "HOST": env("BILLING_DB_HOST"),
+        "CONN_MAX_AGE": 60,
     }
 }
```"""


async def test_readme_screenshot(daemon: RunningDaemon, inbox: OpenInbox) -> None:
    """A realistic inbox; ASKD_UPDATE_SCREENSHOT=1 also writes docs/img/inbox.png."""
    tab = await inbox("alice")
    deploy = await daemon.ask(
        "deploy-api-42",
        "alice",
        [
            {
                "question": "Which database should the new billing service use?",
                "header": "Database",
                "options": [
                    {
                        "label": "PostgreSQL",
                        "description": "Already runs in production; one more schema and a migration.",
                        "preview": README_DIFF,
                    },
                    {"label": "SQLite", "description": "Zero setup, a single file; fine while it runs on `one node`."},
                ],
            },
            {
                "question": "Which checks must pass before it ships?",
                "header": "Checks",
                "multiSelect": True,
                "options": [{"label": "Unit tests"}, {"label": "Integration tests"}, {"label": "Load test"}],
            },
        ],
    )
    await daemon.ask("docs-release-7", "alice", [q("What should the release notes say about the API change?", header="Release notes")])
    bump = await daemon.ask("docs-release-7", "alice", [q("Bump the minor version?", "Yes", "No")])
    other_tab = await daemon.connect("alice")  # answered there: this one shows a note
    answered = await other_tab.answer("docs-release-7", bump["requestId"], {"Bump the minor version?": "Yes"})
    assert answered["payload"] == {"accepted": True}
    await expect(tab.note(bump["requestId"])).to_contain_text("Answered in another tab")
    panel = tab.panel(deploy["requestId"])
    await panel.get_by_label("PostgreSQL").check()
    await panel.get_by_label("Unit tests").check()
    await panel.get_by_label("Integration tests").check()
    await expect(tab.page.locator("form.panel")).to_have_count(2)
    await tab.page.mouse.move(0, 0)
    await tab.page.set_viewport_size({"width": 900, "height": 1400})  # all of it: no sticky footer over a panel
    path = await tab.shot("inbox")
    assert path.stat().st_size > 10_000
    if UPDATE_README_SHOT:
        README_SHOT.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(path, README_SHOT)


async def test_a_refused_focus_subscribe_says_why_and_the_page_stays_connected(daemon: RunningDaemon, inbox: OpenInbox) -> None:
    session = "x" * 300  # longer than askd accepts for a session id
    tab = await inbox("alice", query=f"session={session}")  # waits for the pill's "Connected"
    await expect(tab.page.locator("#banner")).to_contain_text(f"Cannot show session “{session}”")
    await expect(tab.page.locator("#token-form")).to_be_hidden()
