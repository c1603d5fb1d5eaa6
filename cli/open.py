"""``askd open``: the inbox page's URL with a fresh user token, opened in
the local browser where there is one."""

from __future__ import annotations

import os
import sys
import webbrowser
from pathlib import Path
from urllib.parse import urlencode

import httpx
import typer

from askd import tokens
from askd.cli import clients
from askd.cli.clients import UrlOption, command
from askd.cli.common import ConfigOption, eprint, fail
from askd.cli.token import secret_for
from askd.client import Discovery

DEFAULT_TTL_SECONDS = 86400.0


def page_url(base: str, token: str, session: str | None) -> str:
    query = {"token": token, **({"session": session} if session else {})}
    return f"{base.rstrip('/')}/?{urlencode(query)}"


def _has_gui_browser() -> bool:
    """Without a display, ``webbrowser`` falls back to text browsers that
    would take over this terminal; only open where a window can appear."""
    if os.environ.get("BROWSER"):
        return True
    if sys.platform in ("darwin", "win32"):
        return True
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


def _daemon_answers(base: str) -> bool:
    try:
        return httpx.get(f"{base.rstrip('/')}/healthz", timeout=2.0).status_code == 200
    except httpx.HTTPError:
        return False


@command
def open_page(
    user: str = typer.Option(..., "--user", help="The user whose inbox to open (the token's subject)."),
    session: str | None = typer.Option(None, "--session", help="Show only this session."),
    no_browser: bool = typer.Option(False, "--no-browser", help="Only print the URL."),
    ttl: float = typer.Option(DEFAULT_TTL_SECONDS, "--ttl", help="The token's lifetime in seconds."),
    url: str | None = UrlOption,
    config: Path | None = ConfigOption,
) -> None:
    """Print (and open in a browser) the inbox page's URL with a fresh user token."""
    if not user:
        fail("--user must not be empty", 2)
    if ttl <= 0:
        fail("--ttl must be a positive number of seconds", 2)
    base = Discovery(config).url(url or clients.global_options().url)
    link = page_url(base, tokens.issue(secret_for(config), "user", user, ttl), session)
    typer.echo(link)
    if not _daemon_answers(base):
        eprint(f"askd: nothing answers at {base} yet; start the daemon with `askd serve`")
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
