"""``askd open``: a link to the inbox page that logs the browser in,
opened in the local browser where there is one. The link starts with
``public_url`` when there is one (the URL people use, e.g. through a proxy).

The link carries a one-time code, not a token: the page exchanges it once
(``POST /v1/open``) for a user token kept in the browser's storage. So no
token is ever on a browser's command line (where ``ps`` shows it) or in a
URL the browser's history keeps. The code itself is on the browser's
command line, where any local process can read it: it is spent once used
and dies after ``tokens.OPEN_CODE_SECONDS`` (60 s) anyway, and a code made
before ``askd token revoke-all`` is refused."""

from __future__ import annotations

import os
import ssl
import sys
import webbrowser
from pathlib import Path
from urllib.parse import urlencode

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
    opened = False
    if _has_gui_browser():
        try:
            opened = webbrowser.open(link, new=2)
        except webbrowser.Error:
            opened = False
    if not opened:
        eprint("askd: no browser to open here; open the URL above in one")
