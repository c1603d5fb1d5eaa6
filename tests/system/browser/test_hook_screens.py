"""What the person sees on a phone when Claude Code asks through askd: a
real ``askd serve`` (free ports, a temp state directory), the question asked
by ``askd hook claude-code --to alice`` itself with a recorded event on
stdin, and alice's inbox at phone width. docs/hooks.md shows the two
screenshots (written with ASKD_UPDATE_SCREENSHOT=1), and the answer given on
the page is the decision the hook prints."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from playwright.async_api import expect

from askd import state, tokens
from tests.system.browser.conftest import WAIT_MS
from tests.cli.hooks import conftest as hooks
from tests.cli.hooks.conftest import RUN_TIMEOUT, Served, event_text

pytestmark = pytest.mark.browser

PHONE = {"width": 390, "height": 844}
DOCS_IMG = Path(__file__).resolve().parents[3] / "docs" / "img"
UPDATE_DOCS_SHOT = os.environ.get("ASKD_UPDATE_SCREENSHOT") == "1"  # read at import: the fixtures clear ASKD_*

served = hooks.served  # the real `askd serve` the hook tests use


def ask(served: Served, event: str) -> tuple[subprocess.Popen[str], dict[str, Any]]:
    """The hook as Claude Code runs it, and the approval it asked."""
    proc = served.hook("claude-code", "--to", "alice")
    assert proc.stdin is not None
    proc.stdin.write(event)
    proc.stdin.close()
    proc.stdin = None  # communicate() then only reads
    return proc, served.wait_pending("claude-" + json.loads(event)["session_id"])


async def phone_inbox(served: Served, browser: Any) -> Any:
    """alice's inbox in a phone-sized tab, logged in as the page keeps it: a
    user token in the origin's storage."""
    secret = state.read_secret(served.state_dir)
    assert secret is not None
    origin = f"http://127.0.0.1:{served.info['port']}"
    token = tokens.issue(secret, "user", "alice", 600)
    ctx = await browser.new_context(
        viewport=PHONE, is_mobile=True, has_touch=True, color_scheme="light",
        storage_state={"origins": [{"origin": origin, "localStorage": [{"name": "askd.token", "value": token}]}]},
    )
    page = await ctx.new_page()
    problems: list[str] = []
    page.on("pageerror", lambda err: problems.append(f"page error: {err}"))
    await page.goto(origin + "/")
    await expect(page.locator("#conn")).to_have_attribute("data-state", "connected", timeout=WAIT_MS)
    page.problems = problems  # checked by the test at the end
    return page


async def fits(page: Any) -> None:
    wide = await page.evaluate("() => document.documentElement.scrollWidth - document.documentElement.clientWidth")
    assert wide <= 0, f"the page is {wide}px wider than the phone"


async def shoot(page: Any, tmp_path: Path, name: str) -> None:
    path = tmp_path / f"{name}.png"
    await page.screenshot(path=str(path))
    assert path.stat().st_size > 0
    if UPDATE_DOCS_SHOT:
        await page.screenshot(path=str(DOCS_IMG / f"{name}.png"))


async def finish(proc: subprocess.Popen[str]) -> tuple[int, str, str]:
    out, err = await asyncio.to_thread(proc.communicate, None, RUN_TIMEOUT)
    return proc.returncode, out, err


async def test_a_bash_prompt_on_a_phone(served: Served, browser: Any, tmp_path: Path) -> None:
    proc, pending = ask(served, event_text("claude_bash"))
    page = await phone_inbox(served, browser)
    panel = page.locator(f'form.panel[data-request-id="{pending["requestId"]}"]')
    await expect(panel.locator(".action-name")).to_have_text("Bash")
    await expect(panel.locator(".action-summary")).to_contain_text("Claude Code")
    await expect(panel.locator(".action-preview")).to_contain_text("rm -rf node_modules")
    await expect(panel.get_by_role("button", name="Approve always")).to_be_visible()
    await expect(panel.get_by_role("button", name="Deny", exact=True)).to_be_visible()
    await fits(page)
    await shoot(page, tmp_path, "hook-bash")

    await panel.get_by_role("button", name="Approve", exact=True).click()
    code, out, err = await finish(proc)
    assert code == 0, err
    assert json.loads(out) == {"hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": {"behavior": "allow"}}}
    assert page.problems == []


async def test_an_edit_diff_on_a_phone(served: Served, browser: Any, tmp_path: Path) -> None:
    proc, pending = ask(served, event_text("claude_edit"))
    page = await phone_inbox(served, browser)
    panel = page.locator(f'form.panel[data-request-id="{pending["requestId"]}"]')
    await expect(panel.locator(".action-name")).to_have_text("Edit")
    preview = panel.locator(".action-preview")
    await expect(preview).to_contain_text("src/app.py")
    await expect(preview.locator(".diff-del")).to_have_text(["-def greet():", "-    return 'hi'"])
    await expect(preview.locator(".diff-add")).to_have_text(["+def greet(name):", "+    return f'hi {name}'"])
    await expect(panel.get_by_role("button", name="Approve always")).to_be_hidden()  # no suggestions sent
    await fits(page)
    await shoot(page, tmp_path, "hook-edit")

    await panel.get_by_role("button", name="Deny", exact=True).click()
    await panel.get_by_label("Why you deny it (optional)").fill("keep greet() as it is")
    await panel.get_by_role("button", name="Deny action").click()
    code, out, err = await finish(proc)
    assert code == 0, err
    decision = json.loads(out)["hookSpecificOutput"]["decision"]
    assert decision["behavior"] == "deny" and decision["message"].endswith("denied it: keep greet() as it is")
    assert page.problems == []
