"""Characters a person cannot see, in the inbox page of a real daemon
(protocol sections 4 and 17): a "Trojan Source" command, whose
bidirectional isolates make ``cat README.md ⁧; echo PWNED #⁩`` read as
``cat README.md # echo PWNED ;``, shows each control as a badge, in the
action's name, its preview (a code block), its arguments and its editor,
under a warning line in the page's language; the real characters are not
in what is drawn; the agent gets the arguments back exactly as asked."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from playwright.async_api import expect

from tests.system.browser.conftest import OpenInbox
from tests.conftest import RunningDaemon

pytestmark = pytest.mark.browser

RLI, PDI, ZWSP = "\u2067", "\u2069", "\u200b"
HIDDEN = (RLI, PDI, ZWSP, "\u202e", "\u200e", "\u061c", "\u00ad", "\ufeff")
TROJAN = f"cat README.md {RLI}; echo PWNED #{PDI}"
WARNING = "This text has hidden or reordering characters: each is shown as a ⟨U+…⟩ mark."


async def ask_action(daemon: RunningDaemon, **action: Any) -> str:
    body = {"userId": "alice", "action": {"name": f"Bash{ZWSP}", "arguments": {"command": TROJAN}, "preview": f"```\n{TROJAN}\n```", **action}}
    r = await daemon.http.post(f"{daemon.url}/v1/sessions/s1/questions", json=body, headers=daemon.agent_headers)
    assert r.status_code == 201, r.text
    return str(r.json()["requestId"])


async def drawn(locator: Any) -> str:
    """What the page draws of an element (its rendered text)."""
    text: str = await locator.inner_text()
    return text


async def test_a_trojan_source_command_shows_its_controls_and_runs_as_asked(daemon: RunningDaemon, inbox: OpenInbox) -> None:
    tab = await inbox("alice")
    rid = await ask_action(daemon)
    panel = tab.panel(rid)
    await expect(panel.locator(".hidden-warning")).to_have_text(WARNING)
    await expect(panel.locator(".action-name")).to_have_text("Bash⟨U+200B⟩")
    preview = panel.locator(".action-preview pre")
    await expect(preview.locator(".hidden-char")).to_have_text(["⟨U+2067⟩", "⟨U+2069⟩"])
    assert (await drawn(preview)).strip() == "cat README.md ⟨U+2067⟩; echo PWNED #⟨U+2069⟩"
    args = panel.locator(".args-json")
    await expect(args.locator(".hidden-char")).to_have_text(["⟨U+2067⟩", "⟨U+2069⟩"])
    # A badge is styled apart from the text around it (a bordered box, not plain glyphs).
    border = await args.locator(".hidden-char").first.evaluate("(el) => getComputedStyle(el).borderTopStyle")
    assert border == "solid"
    shown = await drawn(panel)
    assert not any(c in shown for c in HIDDEN), shown
    await tab.shot("hidden-characters")

    waiting = asyncio.create_task(daemon.result("s1", rid, wait=20))
    await panel.get_by_role("button", name="Approve", exact=True).click()
    result = (await asyncio.wait_for(waiting, 10)).json()
    assert result["approved"] is True and result["arguments"] == {"command": TROJAN} and result["edited"] is False


async def test_the_warning_is_in_the_pages_language(daemon: RunningDaemon, inbox: OpenInbox) -> None:
    tab = await inbox("alice", query="lang=zh-CN")
    rid = await ask_action(daemon)
    await expect(tab.panel(rid).locator(".hidden-warning")).to_have_text("此文本含有隐藏字符或改变文字方向的字符：每个都显示为 ⟨U+…⟩ 标记。")


async def test_an_editable_actions_editor_writes_them_as_escapes_and_approves_them_unchanged(
    daemon: RunningDaemon, inbox: OpenInbox
) -> None:
    tab = await inbox("alice")
    rid = await ask_action(daemon, editable=True)
    panel = tab.panel(rid)
    editor = panel.locator(".args-edit")
    await expect(editor).to_have_value('{\n  "command": "cat README.md \\u2067; echo PWNED #\\u2069"\n}')
    await expect(panel.locator(".hidden-warning")).to_be_visible()
    waiting = asyncio.create_task(daemon.result("s1", rid, wait=20))
    await panel.get_by_role("button", name="Approve", exact=True).click()
    result = (await asyncio.wait_for(waiting, 10)).json()
    assert result["approved"] is True and result["arguments"] == {"command": TROJAN}


async def test_a_question_and_its_options_show_hidden_characters_marked(daemon: RunningDaemon, inbox: OpenInbox) -> None:
    tab = await inbox("alice")
    text = f"Deploy{ZWSP} to **prod**?"
    question = {
        "question": text,
        "header": f"Re{RLI}lease",
        "options": [
            {"label": "Yes", "description": f"ship it{ZWSP}", "preview": f"```diff\n+v{PDI}2\n```"},
            {"label": "No"},
        ],
    }
    asked = await daemon.ask("s1", "alice", [question])
    panel = tab.panel(asked["requestId"])
    await expect(panel.locator(".hidden-warning")).to_have_text(WARNING)
    await expect(panel.locator(".qtext")).to_have_text("Deploy⟨U+200B⟩ to prod?")
    await expect(panel.locator("legend .chip")).to_have_text("Re⟨U+2067⟩lease")
    await expect(panel.locator(".opt-desc .hidden-char")).to_have_text(["⟨U+200B⟩"])
    await expect(panel.locator(".preview-body .diff-add")).to_have_text("+v⟨U+2069⟩2")
    shown = await drawn(panel)
    assert not any(c in shown for c in HIDDEN), shown
    await panel.get_by_label("Yes").check()
    waiting = asyncio.create_task(daemon.result("s1", asked["requestId"], wait=20))
    await panel.get_by_role("button", name="Submit").click()
    result = (await asyncio.wait_for(waiting, 10)).json()
    assert result["answers"] == {text: "Yes"}  # keyed by the text as asked


async def test_a_question_with_no_hidden_character_has_no_warning(daemon: RunningDaemon, inbox: OpenInbox) -> None:
    tab = await inbox("alice")
    rid = (await daemon.ask("s1", "alice", [{"question": "Deploy to prod?", "options": [{"label": "Yes"}]}]))["requestId"]
    await expect(tab.panel(rid).locator(".qtext")).to_have_text("Deploy to prod?")
    await expect(tab.panel(rid).locator(".hidden-warning, .hidden-char")).to_have_count(0)
