"""Rich questions in Chromium: Markdown that can never run or fetch
anything, the same HTML as the server's renderer, diff previews that
scroll in their box, and the page in English or Chinese."""

from __future__ import annotations

import re
from typing import Any

import pytest
from playwright.async_api import expect

from askd.protocol import visible
from askd.web.markdown import render, shown as shown_html
from tests.system.browser.conftest import OpenInbox
from tests.conftest import RunningDaemon, q
from tests.web.cases import CASES, HOSTILE, shown_text, squash
from tests.web.test_languages import LOOKUPS

pytestmark = pytest.mark.browser

# Set before any page script: hostile text that ran would push here, and
# any CSP refusal is recorded.
TRAPS = """
window.__pwned = [];
window.__csp = [];
document.addEventListener('securitypolicyviolation', (e) => window.__csp.push(`${e.violatedDirective} ${e.blockedURI}`));
"""


@pytest.fixture
def settings_overrides() -> dict[str, Any]:
    # The hostile corpus repeats a 20,000-character line in five fields.
    return {"limits": {"max_request_bytes": 1 << 20}}


async def trapped_context(browser: Any, daemon: RunningDaemon, **options: Any) -> tuple[Any, list[str]]:
    ctx = await browser.new_context(**{"viewport": {"width": 1000, "height": 760}, **options})
    await ctx.add_init_script(TRAPS)
    elsewhere: list[str] = []
    ctx.on("request", lambda r: None if r.url.startswith((daemon.url, "data:")) else elsewhere.append(r.url))
    return ctx, elsewhere


async def test_page_and_server_render_the_same_html(daemon: RunningDaemon, inbox: OpenInbox) -> None:
    tab = await inbox(None, connected=False)
    texts = CASES + HOSTILE
    page_html = await tab.page.evaluate(
        "async ([url, texts]) => { const { renderHtml } = await import(url); return texts.map((t) => renderHtml(t)); }",
        [f"{daemon.url}/static/markdown.js", texts],
    )
    mismatched = [(text[:60], got, render(text)) for text, got in zip(texts, page_html, strict=True) if got != render(text)]
    assert not mismatched, mismatched[:3]


# The part of a panel each field lands in; Markdown fields are compared
# with the text of the server's HTML, plain ones with the text itself.
SHOWN = """(panel) => {
    const text = (sel) => {
        const el = panel.querySelector(sel);
        if (!el) return null;
        const copy = el.cloneNode(true);
        copy.querySelectorAll('button.copy').forEach((b) => b.remove());
        return copy.textContent;
    };
    return {
        header: text('.chip'), label: text('.opt-label'), question: text('.qtext'),
        description: text('.opt-desc'), preview: text('.preview-body'),
    };
}"""


async def test_hostile_text_never_runs_never_loads_anything_and_is_shown(
    daemon: RunningDaemon, inbox: OpenInbox, browser: Any
) -> None:
    assert len(HOSTILE) >= 40
    ctx, elsewhere = await trapped_context(browser, daemon)
    tab = await inbox("alice", context=ctx)
    asked = []
    # A label holds no control, bidirectional or zero-width character (protocol section 4): those become spaces.
    labels = ["".join(" " if visible.refusal(c) else c for c in payload) for payload in HOSTILE]
    for payload, label in zip(HOSTILE, labels, strict=True):
        question = {
            "question": payload,
            "header": payload,
            "options": [{"label": label, "description": payload, "preview": payload}, {"label": "safe"}],
        }
        asked.append(await daemon.ask("hostile", "alice", [question], metadata={"note": payload, payload[:50]: payload}))
    await expect(tab.page.locator("form.panel")).to_have_count(len(HOSTILE))

    for payload, label, a in zip(HOSTILE, labels, asked, strict=True):
        panel = tab.panel(a["requestId"])
        shown = await panel.evaluate(SHOWN)
        # Hidden characters are drawn as their marks (⟨U+202E⟩), in every field.
        assert shown["header"] == visible.reveal(payload) and shown["label"] == label
        as_markdown = shown_text(shown_html(payload))
        for field in ("question", "description", "preview"):
            assert squash(shown[field]) == as_markdown, (field, payload[:80])
    # Closed panels leave a note with the question's text as one line of plain text:
    # a piece of what the panel showed, never markup.
    for a in asked[:10]:
        r = await daemon.http.delete(
            f"{daemon.url}/v1/sessions/hostile/questions/{a['requestId']}", headers=daemon.agent_headers
        )
        assert r.status_code == 200, r.text
    for payload, a in zip(HOSTILE[:10], asked[:10], strict=True):
        await expect(tab.note(a["requestId"])).to_be_visible()
        note = await tab.note(a["requestId"]).locator(".note-q").text_content()
        assert note and "\n" not in note and len(note) <= 140, (note, payload[:80])
        shown = shown_text(shown_html(payload))
        assert squash(note.removesuffix("…")) in shown or note == payload, (note, payload[:80])
        assert await tab.note(a["requestId"]).locator(".chip").text_content() == visible.reveal(payload)

    await tab.page.mouse.move(300, 300)
    await tab.page.keyboard.press("Tab")
    assert await tab.page.evaluate("() => window.__pwned") == []
    assert await tab.page.evaluate("() => window.__csp") == []
    assert elsewhere == []
    assert await tab.page.locator("main img, main iframe, main object, main svg, main script, main style").count() == 0


async def test_links_in_the_dom_open_a_new_tab_without_opener_or_referrer(daemon: RunningDaemon, inbox: OpenInbox) -> None:
    """On the DOM, not on the rendered string: the sanitiser runs after the
    renderer and once dropped what the renderer set."""
    tab = await inbox("alice")
    text = "See [the docs](https://example.com/docs) and ![a chart](https://example.com/c.png)\n\n3. third\n4. fourth"
    asked = await daemon.ask("s1", "alice", [{"question": text, "options": [{"label": "ok", "description": text}]}])
    panel = tab.panel(asked["requestId"])
    await expect(panel).to_be_visible()
    links = await panel.evaluate("(p) => [...p.querySelectorAll('.md a')].map((a) => [a.href, a.target, a.rel])")
    assert len(links) == 4, links  # two in the question, two in the description
    for href, target, rel in links:
        assert href.startswith("https://example.com/")
        assert (target, rel) == ("_blank", "noopener noreferrer")
    assert await panel.evaluate("(p) => [...p.querySelectorAll('.md ol')].map((ol) => ol.start)") == [3, 3]


def diff_preview(lines: list[str]) -> str:
    return "```diff\n" + "\n".join(lines) + "\n```"


async def test_a_diff_preview_marks_its_lines_and_copies_its_text(daemon: RunningDaemon, inbox: OpenInbox, browser: Any) -> None:
    ctx = await browser.new_context(viewport={"width": 1000, "height": 760})
    await ctx.grant_permissions(["clipboard-read", "clipboard-write"], origin=daemon.url)
    tab = await inbox("alice", context=ctx)
    lines = ["--- a/db.py", "+++ b/db.py", "@@ -1,2 +1,2 @@", " import os", "-POOL = 5", "+POOL = 20  # <b>&"]
    question = {
        "question": "Raise the **pool size**?",
        "options": [{"label": "Apply", "preview": diff_preview(lines)}, {"label": "Keep", "description": "No change."}],
    }
    asked = await daemon.ask("s1", "alice", [question])
    preview = tab.panel(asked["requestId"]).locator(".preview")
    await expect(preview).to_be_visible()
    await expect(preview.locator(".diff-add")).to_have_text("+POOL = 20  # <b>&")
    await expect(preview.locator(".diff-del")).to_have_text("-POOL = 5")
    await expect(preview.locator(".diff-hunk")).to_have_text("@@ -1,2 +1,2 @@")
    add, delete, plain = [
        await preview.locator(sel).first.evaluate("el => getComputedStyle(el).backgroundColor")
        for sel in (".diff-add", ".diff-del", "pre")
    ]
    assert len({add, delete, plain}) == 3  # added and removed lines are told apart
    await tab.panel(asked["requestId"]).locator(".qtext strong").filter(has_text="pool size").wait_for()

    await preview.get_by_role("button", name="Copy").click()
    await expect(preview.get_by_role("button", name="Copied")).to_be_visible()
    assert await tab.page.evaluate("() => navigator.clipboard.readText()") == "\n".join(lines) + "\n"


@pytest.mark.parametrize("width", [1000, 360])
async def test_the_copy_button_covers_no_line_of_code(daemon: RunningDaemon, inbox: OpenInbox, browser: Any, width: int) -> None:
    ctx = await browser.new_context(viewport={"width": width, "height": 760})
    tab = await inbox("alice", context=ctx)
    diff = diff_preview(["+" + "POOL_SIZE = 20  # raised for the batch jobs " * 4, " import os", "-POOL = 5"])
    code = "```\n" + "x = 1  # " + "a long first line " * 8 + "\ny = 2\n```"
    question = {"question": f"Raise it?\n\n{code}", "options": [{"label": "Apply", "preview": diff}, {"label": "Keep"}]}
    asked = await daemon.ask("s1", "alice", [question])
    panel = tab.panel(asked["requestId"])
    await expect(panel.locator(".preview .diff-add")).to_be_visible()
    overlaps = await panel.evaluate(
        """(panel) => [...panel.querySelectorAll('.code')].map((box) => {
            const button = box.querySelector('button.copy').getBoundingClientRect();
            const range = document.createRange();
            range.selectNodeContents(box.querySelector('pre'));
            return [...range.getClientRects()].some((r) => r.width > 0 && r.height > 0 &&
                r.left < button.right && button.left < r.right && r.top < button.bottom && button.top < r.bottom);
        })"""
    )
    assert overlaps == [False, False]  # the question's code block and the preview's diff


async def test_a_long_preview_scrolls_in_its_box_and_submit_stays_on_a_phone_screen(
    daemon: RunningDaemon, inbox: OpenInbox, browser: Any
) -> None:
    ctx = await browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True)
    tab = await inbox("alice", context=ctx)
    preview = diff_preview([f"+line {i}" if i % 3 else f"-line {i}" for i in range(2000)])
    question = {"question": "Apply this migration?", "options": [{"label": "Apply", "preview": preview}, {"label": "Skip"}]}
    asked = await daemon.ask("s1", "alice", [question])
    panel = tab.panel(asked["requestId"])
    box = panel.locator(".preview")
    await expect(box.locator(".diff-add")).to_have_count(1333)
    submit = panel.get_by_role("button", name="Submit")
    await expect(submit).to_be_in_viewport()
    assert await box.evaluate("el => el.scrollHeight > 4 * el.clientHeight")  # it scrolls inside its box
    height = await tab.page.evaluate("() => document.documentElement.scrollHeight")
    assert height < 2 * 844, height
    await box.evaluate("el => { el.scrollTop = el.scrollHeight; }")
    await tab.page.mouse.wheel(0, 2000)
    await expect(submit).to_be_in_viewport()
    await tab.shot("long-preview-phone")


async def test_one_preview_follows_focus_and_choice_beside_or_under_the_options(
    daemon: RunningDaemon, inbox: OpenInbox, browser: Any
) -> None:
    question = {
        "question": "Which patch?",
        "options": [
            {"label": "Patch A", "preview": "```diff\n+a\n```"},
            {"label": "Patch B", "preview": "```diff\n+b\n```"},
            {"label": "Neither"},
        ],
    }
    for width, beside in ((1000, True), (390, False)):
        ctx = await browser.new_context(viewport={"width": width, "height": 760})
        tab = await inbox("alice", context=ctx)
        asked = await daemon.ask(f"w{width}", "alice", [question])
        panel = tab.panel(asked["requestId"])
        preview = panel.locator(".preview")
        await expect(preview).to_have_count(1)
        await expect(preview).to_contain_text("+a")  # before any choice: the first option's

        options, shown = await panel.locator(".options").bounding_box(), await preview.bounding_box()
        assert options and shown
        if beside:
            assert shown["x"] >= options["x"] + options["width"]
        else:
            assert shown["y"] >= options["y"] + options["height"]

        keyboard = tab.page.keyboard
        await panel.get_by_label("Patch A").focus()
        await keyboard.press("ArrowDown")  # chooses and focuses B
        await expect(preview).to_contain_text("+b")
        await expect(panel.get_by_role("region", name="Preview: Patch B")).to_be_visible()
        await expect(panel.get_by_label("Patch B")).to_have_count(1)  # the input alone
        await keyboard.press("ArrowDown")  # Neither: no preview to show
        await expect(preview).to_be_hidden()
        await keyboard.press("ArrowUp")
        await keyboard.press("Tab")  # the "Other" field, then the preview
        await keyboard.press("Tab")
        await expect(preview).to_be_focused()
        await expect(preview).to_contain_text("+b")
        await ctx.close()


async def test_the_page_speaks_chinese_when_asked_or_when_the_browser_does(
    daemon: RunningDaemon, inbox: OpenInbox, browser: Any
) -> None:
    async def chinese(tab: Any, session: str) -> None:
        asked = await daemon.ask(session, "alice", [q("Deploy?", "yes", "no")], timeoutSeconds=600)
        panel = tab.panel(asked["requestId"])
        await expect(tab.page.locator("html")).to_have_attribute("lang", "zh-CN")
        # Ticking in Chinese; a loaded machine may skip a second between ticks.
        await expect(panel.locator("time")).to_have_text(re.compile(r"^\s*剩余 9:5\d\s*$"), timeout=3000)
        await expect(panel.get_by_role("button", name="提交回答")).to_be_visible()
        await expect(panel.locator(".asked")).to_contain_text("提问于")
        await expect(tab.page.locator("#conn-text")).to_have_text("已连接")
        await expect(tab.page.locator(f'.session[data-session-id="{session}"] .count')).to_have_text("1 个待回答")
        assert (await tab.page.title()).endswith(") askd 收件箱")
        await tab.shot(f"chinese-{session}")

    await chinese(await inbox("alice", query="lang=zh-CN"), "s1")
    for locale in ("zh-CN", "zh-SG"):
        ctx = await browser.new_context(locale=locale)
        assert await (await ctx.new_page()).evaluate("() => navigator.languages[0]") == locale
        await chinese(await inbox("alice", context=ctx), f"s-{locale}")

    # ?lang= wins over the browser; an unknown language is English.
    for locale, query, word in (("zh-CN", "lang=en", "Connected"), ("fr-FR", "", "Connected"), ("en-US", "lang=xx", "Connected")):
        ctx = await browser.new_context(locale=locale)
        tab = await inbox("alice", context=ctx, query=query)
        await expect(tab.page.locator("#conn-text")).to_have_text(word)
        await expect(tab.page.locator("html")).to_have_attribute("lang", "en")


async def test_the_page_picks_languages_as_the_server_does(daemon: RunningDaemon, inbox: OpenInbox) -> None:
    tab = await inbox(None, connected=False)
    picked = await tab.page.evaluate(
        """async ([base, lookups]) => {
            const { pickLanguage } = await import(`${base}/static/i18n.js`);
            const config = await (await fetch(`${base}/static/languages.json`)).json();
            return lookups.map(([wanted]) => pickLanguage(wanted, config));
        }""",
        [daemon.url, LOOKUPS],
    )
    assert picked == [chosen for _, chosen in LOOKUPS]


async def test_the_waiting_count_uses_plural_rules(daemon: RunningDaemon, inbox: OpenInbox) -> None:
    tab = await inbox("alice")
    await daemon.ask("s1", "alice", [q("One?", "a")])
    await expect(tab.page.locator(".session .count")).to_have_text("1 waiting")
    await daemon.ask("s1", "alice", [q("Two?", "a")])
    await expect(tab.page.locator(".session .count")).to_have_text("2 waiting")
