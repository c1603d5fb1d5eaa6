"""``askd receipt verify``: check a receipt (protocol section 16) the way an
executor would, from the command line."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import httpx
import typer

from askd.cli.clients import CaCertOption, UrlOption, command, global_options
from askd.cli.common import ConfigOption, fail, print_json
from askd.client import Discovery
from askd.protocol import codec
from askd.receipts import ReceiptError, verify as verify_receipt

JWKS_PATH = "/.well-known/jwks.json"
FETCH_TIMEOUT_SECONDS = 10.0

app = typer.Typer(help="Check askd's signed receipts of ended questions.", no_args_is_help=True)


def _json_file(path: Path, what: str) -> Any:
    try:
        return codec.loads(path.read_text(encoding="utf-8"))
    except OSError as err:
        fail(f"cannot read {what} {path}: {err.strerror or err}")
    except (ValueError, UnicodeDecodeError) as err:
        fail(f"{what} {path} is not JSON: {err}")


def _fetch(url: str, tls: Any) -> Any:
    try:
        response = httpx.get(url, timeout=FETCH_TIMEOUT_SECONDS, verify=tls if tls is not None else True)
    except httpx.HTTPError as err:
        fail(f"cannot fetch the JWKS at {url}: {err}")
    if response.status_code != 200:
        fail(f"cannot fetch the JWKS at {url}: HTTP {response.status_code}")
    try:
        return response.json()
    except ValueError:
        fail(f"the JWKS at {url} is not JSON")


def jwks_of(source: str | None, url: str | None, config: Path | None, cacert: Path | None) -> Any:
    """``--jwks`` as a URL or a file; without it, the daemon's own, found as
    every command finds askd (--url, ASKD_URL, askd.json, the configuration)."""
    found = Discovery(config)
    if source is not None and not source.startswith(("http://", "https://")):
        return _json_file(Path(source), "the JWKS file")
    where = source or found.url(url or global_options().url) + JWKS_PATH
    return _fetch(where, found.tls(where, cacert or global_options().cacert))


@app.command("verify")
@command
def verify(
    receipt: str = typer.Argument(..., help="The receipt (a compact JWS), or - to read it from stdin."),
    jwks: str | None = typer.Option(None, "--jwks", help="The JWKS: a file, or an http(s) URL. Default: the running daemon's."),
    action: Path | None = typer.Option(
        None, "--action", help='A JSON file {"name", "arguments"}: also check the receipt approves exactly this action.', dir_okay=False
    ),
    url: str | None = UrlOption,
    cacert: Path | None = CaCertOption,
    config: Path | None = ConfigOption,
) -> None:
    """Check a receipt: exit 0 and print its claims when it holds, else exit 1 with one line saying why."""
    text = sys.stdin.read() if receipt == "-" else receipt
    wanted = _json_file(action, "the action file") if action is not None else None
    keys = jwks_of(jwks, url, config, cacert)
    try:
        claims = verify_receipt(text, keys, action=wanted)
    except ReceiptError as err:
        fail(f"receipt refused: {err}")
    print_json(claims)
