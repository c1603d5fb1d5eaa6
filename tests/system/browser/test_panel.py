"""What a panel shows and what its answers look like on the wire: text
stays text, multi-select and free-text answers arrive as the spec says,
and the page works from the keyboard alone."""

from __future__ import annotations

import asyncio

import pytest
from playwright.async_api import expect

from tests.system.browser.conftest import OpenInbox
from tests.conftest import RunningDaemon, q

pytestmark = pytest.mark.browser


async def test_markup_in_question_header_and_options_stays_text(daemon: RunningDaemon, inbox: OpenInbox) -> None:
    tab = await inbox("alice")
    question = "<img src=x onerror=\"window.__xss='question'\"> drop tables?"
    header = "<b onmouseover=\"window.__xss='header'\">Header</b>"
    label = "<script>window.__xss='label'</script>"
    description = "<iframe src=\"javascript:window.__xss='description'\"></iframe>"
    asked = await daemon.ask(
        "s1", "alice", [{"question": question, "header": header, "options": [{"label": label, "description": description}]}]
    )
    rid = asked["requestId"]
    panel = tab.panel(rid)
    await expect(panel).to_be_visible()

    await expect(panel.locator(".qtext")).to_have_text(question)
    await expect(panel.locator(".chip")).to_have_text(header)
    await expect(panel.locator(".opt-label").first).to_have_text(label)
    await expect(panel.locator(".opt-desc")).to_have_text(description)
    assert await tab.page.locator("main img, main b, main script, main iframe").count() == 0
    await panel.locator(".chip").hover()
    await tab.shot("xss-as-text")

    waiting = asyncio.create_task(daemon.result("s1", rid, wait=20))
    await panel.get_by_label(label).check()
    await panel.get_by_role("button", name="Submit").click()
    result = (await asyncio.wait_for(waiting, 10)).json()
    assert result["answers"] == {question: label}
    await expect(tab.note(rid).locator(".note-q")).to_have_text(question)
    assert await tab.page.evaluate("() => window.__xss") is None


async def test_multi_select_other_and_free_text_answers_arrive_as_the_spec_says(daemon: RunningDaemon, inbox: OpenInbox) -> None:
    tab = await inbox("alice")
    questions = [
        q("Which checks must pass?", "Unit tests", "Integration tests", "Load test", multi=True, header="Checks"),
        q("Which region?", "eu-west", "us-east", header="Region"),
        q("Release notes?"),
        q("Skipped question?", "a", "b"),
    ]
    asked = await daemon.ask("s1", "alice", questions)
    rid = asked["requestId"]
    panel = tab.panel(rid)
    await expect(panel).to_be_visible()
    await expect(panel.get_by_role("checkbox")).to_have_count(4)  # three options and "Other"
    await expect(panel.get_by_role("button", name="Submit")).to_have_count(1)

    checks = panel.get_by_role("group", name="Which checks must pass?")
    await checks.get_by_label("Unit tests").check()
    await checks.get_by_label("Load test").check()
    await checks.get_by_label("Other answer to: Which checks must pass?").fill("Smoke test on staging")
    await expect(checks.get_by_label("Other", exact=True)).to_be_checked()  # typing picked "Other"

    region = panel.get_by_role("group", name="Which region?")
    await region.get_by_label("eu-west").check()
    await region.get_by_label("Other answer to: Which region?").fill("ap-south")  # overrides the radio
    await expect(region.get_by_label("eu-west")).not_to_be_checked()

    await panel.get_by_label("Your answer").fill("  Faster startup.  ")
    await tab.shot("multi-and-other")

    waiting = asyncio.create_task(daemon.result("s1", rid, wait=20))
    await panel.get_by_role("button", name="Submit").click()
    result = (await asyncio.wait_for(waiting, 10)).json()
    assert result["answers"] == {
        "Which checks must pass?": ["Unit tests", "Load test", "Smoke test on staging"],
        "Which region?": "ap-south",
        "Release notes?": "Faster startup.",
    }


async def test_nothing_chosen_is_refused_in_the_page_and_the_question_stays(daemon: RunningDaemon, inbox: OpenInbox) -> None:
    tab = await inbox("alice")
    asked = await daemon.ask("s1", "alice", [q("Deploy?", "yes", "no")])
    rid = asked["requestId"]
    panel = tab.panel(rid)
    await panel.get_by_role("button", name="Submit").click()
    await expect(panel.locator(".status")).to_have_text("Choose or type an answer first.")
    await expect(panel.get_by_label("yes")).to_be_focused()

    await panel.get_by_label("Other", exact=True).check()  # "Other" with nothing typed
    await panel.get_by_role("button", name="Submit").click()
    await expect(panel.locator(".status")).to_contain_text("Type your answer")
    await expect(panel.get_by_label("Other answer to: Deploy?")).to_be_focused()
    assert (await daemon.result("s1", rid)).json()["status"] == "pending"


async def test_keyboard_only(daemon: RunningDaemon, inbox: OpenInbox) -> None:
    tab = await inbox("alice")
    asked = await daemon.ask("s1", "alice", [q("Which database?", "PostgreSQL", "SQLite", "MySQL")])
    rid = asked["requestId"]
    panel = tab.panel(rid)
    await expect(panel).to_be_visible()
    keyboard = tab.page.keyboard

    first = panel.get_by_label("PostgreSQL")
    for _ in range(10):  # Tab from the top of the page to the first option
        await keyboard.press("Tab")
        if await first.evaluate("el => el === document.activeElement"):
            break
    await expect(first).to_be_focused()
    await keyboard.press("ArrowDown")  # radio groups move with the arrows
    await expect(panel.get_by_label("SQLite")).to_be_checked()
    await keyboard.press("Tab")  # next stop: the "Other" text field, then Submit
    await expect(panel.get_by_label("Other answer to: Which database?")).to_be_focused()
    await keyboard.press("Tab")
    await expect(panel.get_by_role("button", name="Submit")).to_be_focused()

    waiting = asyncio.create_task(daemon.result("s1", rid, wait=20))
    await keyboard.press("Enter")
    result = (await asyncio.wait_for(waiting, 10)).json()
    assert result["answers"] == {"Which database?": "SQLite"}
    await expect(tab.note(rid)).to_be_focused()  # focus is not lost when the panel goes


async def test_ctrl_enter_submits_from_a_text_field(daemon: RunningDaemon, inbox: OpenInbox) -> None:
    tab = await inbox("alice")
    asked = await daemon.ask("s1", "alice", [q("What changed?")])
    rid = asked["requestId"]
    field = tab.panel(rid).get_by_label("Your answer")
    await field.fill("line one")
    await field.press("Shift+Enter")  # a new line, not a submit
    await field.type("line two")
    waiting = asyncio.create_task(daemon.result("s1", rid, wait=20))
    await field.press("Control+Enter")
    result = (await asyncio.wait_for(waiting, 10)).json()
    assert result["answers"] == {"What changed?": "line one\nline two"}


async def test_panels_are_grouped_by_session_and_a_session_can_be_focused(daemon: RunningDaemon, inbox: OpenInbox) -> None:
    a1 = await daemon.ask("s1", "alice", [q("First?")])
    b1 = await daemon.ask("s2", "alice", [q("Second?")])
    a2 = await daemon.ask("s1", "alice", [q("Third?")])
    await daemon.ask("s3", "bob", [q("Not alice's?")])

    tab = await inbox("alice")
    groups = tab.page.locator("section.session")
    await expect(groups).to_have_count(2)
    await expect(groups.nth(0).locator("h2")).to_have_text("Sessions1")
    await expect(groups.nth(0).locator("form.panel")).to_have_count(2)
    await expect(groups.nth(0).locator(".count")).to_have_text("2 waiting")
    order = await groups.nth(0).locator("form.panel").evaluate_all("els => els.map(e => e.dataset.requestId)")
    assert order == [a1["requestId"], a2["requestId"]]  # oldest first
    await expect(groups.nth(1).locator("form.panel")).to_have_count(1)
    await expect(tab.page.get_by_text("Not alice's?")).to_have_count(0)

    focused = await inbox("alice", query="session=s2")
    await expect(focused.panel(b1["requestId"])).to_be_visible()
    await expect(focused.page.locator("#focus-bar")).to_contain_text("s2")
    later = await daemon.ask("s1", "alice", [q("Fourth?")])  # pushed to every tab; this one ignores it
    await expect(tab.panel(later["requestId"])).to_be_visible()
    await expect(focused.page.locator("form.panel")).to_have_count(1)
    await expect(tab.page).to_have_title("(4) askd inbox")


async def test_an_answered_note_shows_the_header_and_a_plain_text_summary(daemon: RunningDaemon, inbox: OpenInbox) -> None:
    tab = await inbox("alice")
    question = (
        "Apply **this** [migration](https://example.com/m) to `orders`? It drops a column.\n\n"
        "```diff\n-    legacy_id INT,\n+    -- gone\n```\n"
    )
    asked = await daemon.ask("s1", "alice", [{"question": question, "header": "Schema", "options": [{"label": "Apply"}]}])
    rid = asked["requestId"]
    # An accessible name is plain text too.
    await expect(tab.panel(rid).get_by_role("textbox")).to_have_accessible_name("Other answer to: Apply this migration to orders?")
    await tab.panel(rid).get_by_label("Apply", exact=True).check()
    await tab.panel(rid).get_by_role("button", name="Submit").click()
    note = tab.note(rid)
    await expect(note.locator(".chip")).to_have_text("Schema")
    await expect(note.locator(".note-q")).to_have_text("Apply this migration to orders?")  # the first sentence, no markup
    await expect(note.locator(".note-text")).to_have_text("Answered. The agent has your answer.")
    assert await note.locator("strong, a, code, pre").count() == 0


async def test_a_question_of_only_code_is_summed_up_by_its_header(daemon: RunningDaemon, inbox: OpenInbox) -> None:
    tab = await inbox("alice")
    asked = await daemon.ask("s1", "alice", [{"question": "```\nrm -rf build\n```", "header": "Clean?", "options": [{"label": "ok"}]}])
    await daemon.http.delete(f"{daemon.url}/v1/sessions/s1/questions/{asked['requestId']}", headers=daemon.agent_headers)
    await expect(tab.note(asked["requestId"]).locator(".note-q")).to_have_text("Clean?")


@pytest.mark.parametrize(
    ("lang", "one", "several"),
    [
        (
            "en",
            "Timed out. The default answer was applied for you: No. The agent was told.",
            "Timed out. The default answer was applied for you: Deploy: No; Notify?: team and ops. The agent was told.",
        ),
        ("zh-CN", "已超时。已为你采用默认答案：No。代理已收到通知。", "已超时。已为你采用默认答案：Deploy: No; Notify?: team和ops。代理已收到通知。"),
    ],
)
async def test_a_timeout_says_which_default_was_applied(
    daemon: RunningDaemon, inbox: OpenInbox, lang: str, one: str, several: str
) -> None:
    tab = await inbox("alice", query=f"lang={lang}")
    single = await daemon.ask(
        "s1", "alice", [q("Deploy **now**?", "Yes", "No")], timeoutSeconds=0.5, onTimeout={"answers": {"Deploy **now**?": "No"}}
    )
    multi = {"question": "Notify?", "multiSelect": True, "options": [{"label": "team"}, {"label": "ops"}]}
    pair = await daemon.ask(
        "s2",
        "alice",
        [{**q("Deploy **now**?", "Yes", "No"), "header": "Deploy"}, multi],
        timeoutSeconds=0.5,
        onTimeout={"answers": {"Deploy **now**?": "No", "Notify?": ["team", "ops"]}},
    )
    plain = await daemon.ask("s3", "alice", [q("Deploy?", "Yes", "No")], timeoutSeconds=0.5)
    await expect(tab.note(single["requestId"]).locator(".note-text")).to_have_text(one)
    await expect(tab.note(pair["requestId"]).locator(".note-text")).to_have_text(several)
    plain_text = "Timed out. The agent was told." if lang == "en" else "已超时，代理已收到通知。"
    await expect(tab.note(plain["requestId"]).locator(".note-text")).to_have_text(plain_text)
