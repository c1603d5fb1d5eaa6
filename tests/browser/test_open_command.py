"""``askd open``: from a running daemon to an answering browser tab with
one command. The CLI runs as a real process and finds the daemon through
``askd.json``."""

from __future__ import annotations

import asyncio
import os
import sys
import time
from pathlib import Path

import jwt
import pytest
from playwright.async_api import expect

from tests.browser.conftest import OpenInbox
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
    assert err == ""  # the daemon answered; no browser was asked for
    url = out.strip()
    assert url.startswith(f"{daemon.url}/?token=")  # the port came from askd.json
    token = url.split("token=")[1].split("&")[0]
    claims = jwt.decode(token, SECRET, algorithms=["HS256"])
    assert claims["sub"] == "alice" and claims["role"] == "user"
    assert 590 <= claims["exp"] - time.time() <= 600

    tab = await inbox(None, connected=False)
    await tab.page.goto(url)
    await tab.connected()
    assert "token=" not in tab.page.url
    await expect(tab.page.locator("#focus-name")).to_have_text("s 1")
    asked = await daemon.ask("s 1", "alice", [q("Deploy?", "yes", "no")])
    await expect(tab.panel(asked["requestId"])).to_be_visible()


async def test_it_opens_the_browser_named_by_the_environment(daemon: RunningDaemon, tmp_path: Path) -> None:
    seen = tmp_path / "opened.txt"
    fake = tmp_path / "fake-browser"
    fake.write_text(f'#!/bin/sh\nprintf %s "$1" > {seen}\n')
    fake.chmod(0o755)
    code, out, err = await _askd_open(tmp_path, "--user", "alice", BROWSER=f"{fake} %s")
    assert code == 0, err
    for _ in range(100):
        if seen.exists() and seen.read_text():
            break
        await asyncio.sleep(0.05)
    assert seen.read_text() == out.strip()


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
