"""``askd open`` keeps the one-time code off every command line (where
every local user reads it, ``/proc/PID/cmdline``): the browser is given a
file only its user can read that hands the code to the page, and the file
is gone once read. A real ``askd open`` process, a browser stand-in (set as
``BROWSER``) that records what it was given, and the test's daemon."""

from __future__ import annotations

import asyncio
import os
import re
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

from askd.cli.open import handoff_file, wait_until_read
from tests.cli.test_subprocess import ASKD, RUN_TIMEOUT
from tests.conftest import SECRET, RunningDaemon, eventually
from tests.support.open_codes import exchange, refused_as_used, user_of

# Records its argv, the mode of the file it is given, and the file's text.
BROWSER = """#!/bin/sh
printf '%s\\n' "$@" > "{seen}/argv"
file=$(printf '%s' "$1" | sed 's|^file://||')
stat -c %a "$file" > "{seen}/mode"
cat "$file" > "{seen}/page"
"""


async def askd_open(tmp_path: Path, *args: str, **env: str) -> tuple[int, str, str]:
    base = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY", "BROWSER")}
    proc = await asyncio.create_subprocess_exec(
        *ASKD, "open", *args,
        env={**base, "ASKD_STATE_DIR": os.environ["ASKD_STATE_DIR"], "ASKD_AUTH__SECRET": SECRET, **env},
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    out, err = await asyncio.wait_for(proc.communicate(), RUN_TIMEOUT)
    assert proc.returncode is not None
    return proc.returncode, out.decode(), err.decode()


async def test_the_browser_gets_a_private_file_not_the_code(daemon: RunningDaemon, tmp_path: Path) -> None:
    seen, runtime = tmp_path / "seen", tmp_path / "run"
    seen.mkdir()
    runtime.mkdir(mode=0o700)
    browser = tmp_path / "browser"
    browser.write_text(BROWSER.format(seen=seen))
    browser.chmod(0o755)
    code, out, err = await askd_open(tmp_path, "--user", "alice", BROWSER=f"{browser} %s", XDG_RUNTIME_DIR=str(runtime))
    assert code == 0, err
    assert "no browser" not in err
    printed = out.strip()  # the link for a phone is printed as before
    assert "#code=" in printed

    argv = (seen / "argv").read_text()
    assert "code=" not in argv and printed.split("#code=")[1] not in argv
    [given] = argv.splitlines()
    path = Path(unquote(urlsplit(given).path))
    assert given.startswith("file://") and path.parent == runtime / "askd"
    assert (seen / "mode").read_text().strip() == "600"
    assert oct((runtime / "askd").stat().st_mode & 0o777) == "0o700"
    assert not path.exists()  # removed once read, before askd open returned

    found = re.search(r"location\.replace\((\"[^\"]+\")\)", (seen / "page").read_text())
    assert found is not None
    link = found.group(1).strip('"')
    assert link.startswith(f"{daemon.url}/#code=")
    handed = link.split("#code=")[1]
    assert user_of(await exchange(daemon.http, daemon.url, handed)) == "alice"  # it logs in, once
    assert refused_as_used(await exchange(daemon.http, daemon.url, handed))


async def test_a_runtime_directory_others_can_enter_is_not_used(daemon: RunningDaemon, tmp_path: Path) -> None:
    seen = tmp_path / "seen"
    seen.mkdir()
    browser = tmp_path / "browser"
    browser.write_text(BROWSER.format(seen=seen))
    browser.chmod(0o755)
    shared = tmp_path / "shared"
    (shared / "askd").mkdir(mode=0o755, parents=True)
    (shared / "askd").chmod(0o755)
    shared.chmod(0o755)
    env = {"BROWSER": f"{browser} %s", "XDG_RUNTIME_DIR": str(shared), "TMPDIR": str(tmp_path)}
    code, _, err = await askd_open(tmp_path, "--user", "alice", **env)
    assert code == 0, err
    path = Path(unquote(urlsplit((seen / "argv").read_text().strip()).path))
    assert not path.is_relative_to(shared) and path.is_relative_to(tmp_path)  # a private one under TMPDIR
    assert (seen / "mode").read_text().strip() == "600"
    assert not path.exists()


async def test_a_file_no_browser_read_is_removed_when_askd_open_is_stopped(daemon: RunningDaemon, tmp_path: Path) -> None:
    """A browser that never reads the file: ``askd open`` waits for it (up
    to its bound); stopped meanwhile, it removes the file as it goes."""
    seen, runtime = tmp_path / "seen", tmp_path / "run"
    seen.mkdir()
    runtime.mkdir(mode=0o700)
    browser = tmp_path / "browser"
    browser.write_text(f'#!/bin/sh\nprintf %s "$1" > "{seen}/argv"\n')
    browser.chmod(0o755)
    base = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY", "BROWSER")}
    env = {**base, "ASKD_AUTH__SECRET": SECRET, "BROWSER": f"{browser} %s", "XDG_RUNTIME_DIR": str(runtime)}
    proc = await asyncio.create_subprocess_exec(
        *ASKD, "open", "--user", "alice", env=env, stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL
    )
    argv = seen / "argv"
    await eventually(lambda: argv.exists() and argv.read_text(), timeout=RUN_TIMEOUT, what="the browser started")
    path = Path(unquote(urlsplit(argv.read_text()).path))
    assert path.exists()  # not read yet: kept for the browser
    proc.terminate()
    assert await asyncio.wait_for(proc.wait(), RUN_TIMEOUT) == 128 + 15
    assert not path.exists()


def test_the_wait_ends_when_the_file_is_read_or_at_its_bound(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    runtime = tmp_path / "run"
    runtime.mkdir(mode=0o700)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
    with handoff_file("http://127.0.0.1:1/#code=C") as page:
        assert not wait_until_read(page, timeout=0.1)  # nobody read it: the bound
        page.read_bytes()
        assert wait_until_read(page, timeout=5)
    assert not page.exists()
