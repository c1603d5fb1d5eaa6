"""``askd open``: a link to the inbox page that logs the browser in,
opened in the local browser where there is one. The link starts with
``public_url`` when there is one (the URL people use, e.g. through a proxy).

The link carries a one-time code, not a token: the page exchanges it once
(``POST /v1/open``) for a user token kept in the browser's storage. So no
token is ever on a browser's command line (where ``ps`` shows it) or in a
URL the browser's history keeps. Nor is the code: every local user can
read a process's command line (``/proc/PID/cmdline``) and redeem the code
first, so the browser is given a file only this user can read (mode 0600,
in the user's runtime directory) that hands the code to the page, and the
file is removed once the browser has read it. The printed link carries the
code, for a browser elsewhere (a phone): it is spent once used and dies
after ``tokens.OPEN_CODE_SECONDS`` (60 s), and a code made before
``askd token revoke-all`` is refused."""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import signal
import ssl
import stat
import sys
import tempfile
import threading
import time
import warnings
import webbrowser
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlencode

import platformdirs

import httpx
import typer

from askd import tokens
from askd.cli import clients
from askd.cli.clients import CaCertOption, UrlOption, command
from askd.cli.common import ConfigOption, eprint, fail
from askd.cli.token import secret_for
from askd.client import Discovery
from askd.client.discovery import cert_error

DEFAULT_TTL_SECONDS = 86400.0


def page_url(base: str, code: str, session: str | None) -> str:
    query = f"?{urlencode({'session': session})}" if session else ""
    return f"{base.rstrip('/')}/{query}#{urlencode({'code': code})}"


def life_notice() -> str:
    return f"the link logs in once, within {tokens.OPEN_CODE_SECONDS:g} seconds; run `askd open` again for another"


def _has_gui_browser() -> bool:
    """Without a display, ``webbrowser`` falls back to text browsers that
    would take over this terminal; only open where a window can appear."""
    if os.environ.get("BROWSER"):
        return True
    if sys.platform in ("darwin", "win32"):
        return True
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


# How long ``askd open`` waits for the browser to read the hand-over file
# before removing it anyway (a browser that starts cold takes seconds), and
# how long it leaves it after the read (a browser may open it twice).
HANDOFF_WAIT_SECONDS = 30.0
HANDOFF_GRACE_SECONDS = 0.5
HANDOFF_POLL_SECONDS = 0.05


def _private_dir() -> Path:
    """A directory only this user can enter: askd's in the user's runtime
    directory (``$XDG_RUNTIME_DIR/askd``) when it is one, else a new
    temporary one (mode 0700, removed with the file)."""
    with contextlib.suppress(OSError), warnings.catch_warnings():
        # Without a usable XDG_RUNTIME_DIR platformdirs warns and picks a checked
        # directory of its own under the temporary one, or refuses (PermissionError).
        warnings.simplefilter("ignore")
        runtime = Path(platformdirs.user_runtime_dir("askd"))
        runtime.mkdir(mode=0o700, parents=True, exist_ok=True)
        st = runtime.lstat()
        if stat.S_ISDIR(st.st_mode) and st.st_uid == os.getuid() and not st.st_mode & 0o077:
            return runtime
    return Path(tempfile.mkdtemp(prefix="askd-open-"))


def _handoff_page(link: str) -> bytes:
    """A page that sends the browser on to ``link`` (the code in its
    fragment) and keeps it out of the history it leaves behind."""
    # A JS string in an inline script: the standard library escapes every
    # non-ASCII character (U+2028 too), and "<" is escaped so nothing in it
    # can end the script.
    target = json.dumps(link).replace("<", "\\u003c")
    return (
        '<!DOCTYPE html><html><head><meta charset="utf-8"><meta name="referrer" content="no-referrer">'
        f"<title>askd</title><script>location.replace({target})</script></head>"
        "<body>Opening askd\u2026</body></html>"
    ).encode()


@contextlib.contextmanager
def handoff_file(link: str) -> Iterator[Path]:
    """A file (mode 0600, in a directory only this user enters) that hands
    ``link`` to the browser that opens it; removed when the block ends."""
    where = _private_dir()
    path = where / f"open-{secrets.token_hex(8)}.html"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
    # A SIGTERM while waiting is an exit too: the file goes with it.
    on_main = threading.current_thread() is threading.main_thread()
    before = signal.signal(signal.SIGTERM, _exit_on_term) if on_main else None
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(_handoff_page(link))
        yield path
    finally:
        path.unlink(missing_ok=True)
        if where.name.startswith("askd-open-"):
            with contextlib.suppress(OSError):
                where.rmdir()
        if before is not None:
            signal.signal(signal.SIGTERM, before)


def _exit_on_term(signum: int, frame: object) -> None:
    raise SystemExit(128 + signum)


def wait_until_read(path: Path, timeout: float = HANDOFF_WAIT_SECONDS) -> bool:
    """Wait (at most ``timeout``) until something read ``path``: its access
    time moves past its write, as the runtime directory's tmpfs records."""
    written = path.stat().st_mtime_ns
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if path.stat().st_atime_ns > written:
            time.sleep(HANDOFF_GRACE_SECONDS)
            return True
        time.sleep(HANDOFF_POLL_SECONDS)
    return False


def _open_in_browser(link: str) -> bool:
    """Open ``link`` in the local browser through a hand-over file, so the
    code is on no command line; the file is gone when this returns."""
    with handoff_file(link) as page:
        try:
            opened = webbrowser.open(page.as_uri(), new=2)
        except webbrowser.Error:
            opened = False
        if opened and not wait_until_read(page):
            # A sandboxed browser (snap, flatpak) may not reach the runtime directory.
            eprint(f"askd: the browser did not read the link within {HANDOFF_WAIT_SECONDS:g} seconds; open the URL above in it")
    return opened


def _unanswered(base: str, verify: ssl.SSLContext | bool) -> str | None:
    """Why ``base`` does not answer as askd, or None when it does."""
    try:
        status = httpx.get(f"{base.rstrip('/')}/healthz", timeout=2.0, verify=verify).status_code
    except httpx.HTTPError as err:
        bad = cert_error(err)
        return f"its TLS certificate is not trusted ({bad.verify_message}); see --cacert" if bad else type(err).__name__
    return None if status == 200 else f"HTTP {status}"


@command
def open_page(
    user: str = typer.Option(..., "--user", help="The user whose inbox to open (the token's subject)."),
    session: str | None = typer.Option(None, "--session", help="Show only this session."),
    no_browser: bool = typer.Option(False, "--no-browser", help="Only print the URL."),
    ttl: float = typer.Option(DEFAULT_TTL_SECONDS, "--ttl", help="The lifetime in seconds of the token the link logs in with."),
    url: str | None = UrlOption,
    cacert: Path | None = CaCertOption,
    config: Path | None = ConfigOption,
) -> None:
    """Print (and open in a browser) a one-time link that opens USER's inbox (valid 60 seconds, once)."""
    if not user:
        fail("--user must not be empty", 2)
    if ttl <= 0:
        fail("--ttl must be a positive number of seconds", 2)
    g = clients.global_options()
    found = Discovery(config)
    base = found.page_url(url or g.url)
    try:
        code = tokens.issue_open_code(secret_for(config), user, ttl)
    except ValueError as err:
        fail(str(err), 2)
    link = page_url(base, code, session)
    typer.echo(link)
    eprint(f"askd: {life_notice()}")
    why = _unanswered(base, found.tls(base, cacert or g.cacert) or True)
    if why is not None:
        eprint(f"askd: nothing answers at {base} yet ({why}); is `askd serve` running?")
    if no_browser:
        return
    opened = _has_gui_browser() and _open_in_browser(link)
    if not opened:
        eprint("askd: no browser to open here; open the URL above in one")
