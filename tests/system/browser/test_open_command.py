"""``askd open``: from a running daemon to an answering browser tab with
one command. The CLI runs as a real process and finds the daemon through
``askd.json``."""

from __future__ import annotations

import asyncio
import json
import os
import sqlite3
import sys
import time
from pathlib import Path

import jwt
import pytest
from playwright.async_api import expect

from askd import tokens
from tests.system.browser.conftest import CHROMIUM, CHROMIUM_ARGS, OpenInbox
from tests.conftest import SECRET, RunningDaemon, q

pytestmark = pytest.mark.browser

ASKD = Path(sys.executable).with_name("askd")


async def _askd_open(tmp_path: Path, *args: str, **env: str) -> tuple[int, str, str]:
    base_env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY", "BROWSER")}
    proc = await asyncio.create_subprocess_exec(
        str(ASKD),
        "open",
        *args,
        env={**base_env, "ASKD_STATE_DIR": str(tmp_path / "state"), "ASKD_AUTH__SECRET": SECRET, **env},
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(proc.communicate(), 30)
    assert proc.returncode is not None
    return proc.returncode, out.decode(), err.decode()


async def test_the_printed_url_opens_a_connected_inbox(daemon: RunningDaemon, inbox: OpenInbox, tmp_path: Path) -> None:
    code, out, err = await _askd_open(tmp_path, "--user", "alice", "--session", "s 1", "--no-browser", "--ttl", "600")
    assert code == 0, err
    # Only how long the link lives: the daemon answered; no browser was asked for.
    assert err == "askd: the link logs in once, within 60 seconds; run `askd open` again for another\n"
    url = out.strip()
    assert url.startswith(f"{daemon.url}/?session=s+1#code=")  # the port came from askd.json
    code = url.split("#code=")[1]
    claims = jwt.decode(code, SECRET, algorithms=["HS256"])  # a one-time code, not a token
    assert claims["sub"] == "alice" and "role" not in claims and claims["ttl"] == 600
    assert 50 <= claims["exp"] - time.time() <= 60  # a minute: the printed link may be seen where it is shown

    tab = await inbox(None, connected=False)
    await tab.page.goto(url)
    await tab.connected()
    assert "code=" not in tab.page.url
    token = await tab.page.evaluate("localStorage.getItem('askd.token')")
    got = jwt.decode(token, SECRET, algorithms=["HS256"])
    assert got["sub"] == "alice" and got["role"] == "user" and 590 <= got["exp"] - time.time() <= 600
    await expect(tab.page.locator("#focus-name")).to_have_text("s 1")
    asked = await daemon.ask("s 1", "alice", [q("Deploy?", "yes", "no")])
    await expect(tab.panel(asked["requestId"])).to_be_visible()


def _profile_files_holding(profile: Path, secret: str) -> list[str]:
    """The files of a Chromium profile whose bytes hold ``secret``."""
    return sorted(str(f.relative_to(profile)) for f in profile.rglob("*") if f.is_file() and secret.encode() in f.read_bytes())


async def test_no_token_reaches_the_browsers_history_favicons_or_sessions(daemon: RunningDaemon, tmp_path: Path) -> None:
    """A persistent profile, as a person's browser has: after askd open's
    link is loaded, reloaded and the inbox opened in a second tab, only the
    page's own storage holds the token: not History, Favicons or Sessions."""
    from playwright.async_api import async_playwright

    code, out, err = await _askd_open(tmp_path, "--user", "alice", "--no-browser")
    assert code == 0, err
    profile = tmp_path / "profile"
    async with async_playwright() as pw:
        ctx = await pw.chromium.launch_persistent_context(str(profile), executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        page = await ctx.new_page()
        await page.goto(out.strip())
        await expect(page.locator("#conn")).to_have_attribute("data-state", "connected")
        token = await page.evaluate("localStorage.getItem('askd.token')")
        await page.reload()  # visited again, as a person does
        await expect(page.locator("#conn")).to_have_attribute("data-state", "connected")
        other = await ctx.new_page()
        await other.goto(f"{daemon.url}/?session=s1")
        await expect(other.locator("#conn")).to_have_attribute("data-state", "connected")
        await ctx.close()  # History, Favicons and the session are written through
    assert token and jwt.decode(token, SECRET, algorithms=["HS256"])["sub"] == "alice"
    with sqlite3.connect(profile / "Default" / "History") as db:
        urls = [row[0] for row in db.execute("SELECT url FROM urls")]
    assert any(u.startswith(daemon.url) for u in urls), urls  # the visit was recorded
    assert not any(token in u or "token=" in u for u in urls), urls
    assert (profile / "Default" / "Favicons").exists() and list((profile / "Default" / "Sessions").iterdir())
    holding = _profile_files_holding(profile, token)
    assert holding and all(f.startswith("Default/Local Storage/") for f in holding), holding
    # The code it did record is spent.
    used = out.strip().split("#code=")[1]
    r = await daemon.http.post(f"{daemon.url}/v1/open", json={"code": used})
    assert r.status_code == 401 and "already used" in r.json()["error"]["message"]


async def test_a_token_in_the_address_signs_nothing_in(daemon: RunningDaemon, tmp_path: Path) -> None:
    """A persistent profile opened at /?token=T and /#token=T: the browser
    writes each address into its History before any page code runs (which
    is why the page no longer takes a token there); the page does not sign
    in with it, keeps it nowhere of its own and takes it out of the address bar."""
    from playwright.async_api import async_playwright

    token = tokens.issue(SECRET, "user", "alice")
    profile = tmp_path / "profile"
    async with async_playwright() as pw:
        ctx = await pw.chromium.launch_persistent_context(str(profile), executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        for where in (f"?token={token}", f"#token={token}"):
            page = await ctx.new_page()
            await page.goto(f"{daemon.url}/{where}")
            await expect(page.locator("#token-form")).to_be_visible()
            await expect(page.locator("#conn")).to_have_attribute("data-state", "stopped")
            assert page.url == f"{daemon.url}/"
            assert await page.evaluate("localStorage.getItem('askd.token')") is None
        await ctx.close()
    assert (await daemon.admin("GET", "/admin/v1/connections?userId=alice")).json()["connections"] == []
    assert not any(f.startswith("Default/Local Storage/") for f in _profile_files_holding(profile, token))


async def test_it_opens_the_browser_named_by_the_environment(daemon: RunningDaemon, tmp_path: Path) -> None:
    """The browser is given a file that leads to the printed link, not the
    link itself (its code would be on the command line: tests/cli/test_open_handoff.py)."""
    seen, page = tmp_path / "opened.txt", tmp_path / "page.html"
    fake = tmp_path / "fake-browser"
    fake.write_text(f'#!/bin/sh\nprintf %s "$1" > {seen}\ncat "${{1#file://}}" > {page}\n')
    fake.chmod(0o755)
    code, out, err = await _askd_open(tmp_path, "--user", "alice", BROWSER=f"{fake} %s")
    assert code == 0, err
    assert seen.read_text().startswith("file://") and "code=" not in seen.read_text()
    assert f"location.replace({json.dumps(out.strip())})" in page.read_text()


async def test_without_a_browser_it_only_prints(daemon: RunningDaemon, tmp_path: Path) -> None:
    code, out, err = await _askd_open(tmp_path, "--user", "alice")
    assert code == 0
    assert out.startswith("http://127.0.0.1:")
    assert "no browser" in err


@pytest.mark.parametrize("args", [["--user", "alice", "--ttl", "0"], ["--session", "s1"]])
async def test_usage_errors(tmp_path: Path, args: list[str]) -> None:
    code, out, _ = await _askd_open(tmp_path, *args)
    assert code == 2
    assert out == ""
