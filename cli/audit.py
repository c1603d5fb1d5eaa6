"""``askd audit``: export the audit trail (protocol section 19) and check a
copy of it offline: each record's hash, the links between them, and
optionally that it reaches a signed head kept elsewhere."""

from __future__ import annotations

import contextlib
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TextIO

import typer

from askd.audit.chain import verify as verify_chain
from askd.audit.export import NotAnExport, read_export
from askd.cli.clients import ADMIN, AdminTarget, CaCertOption, UrlOption, admin_command, command
from askd.cli.common import ConfigOption, fail
from askd.cli.receipt import jwks_of
from askd.protocol import codec
from askd.receipts import ReceiptError, verify_head

app = typer.Typer(help="Export the audit trail and check a copy of it.", no_args_is_help=True)


@app.command("export")
@admin_command
def export(
    since: str | None = typer.Option(None, "--since", help="From this RFC 3339 time (inclusive)."),
    until: str | None = typer.Option(None, "--until", help="Up to this RFC 3339 time (exclusive)."),
    session: str | None = typer.Option(None, "--session", help="Only this session's records."),
    user: str | None = typer.Option(None, "--user", help="Only questions whose audience includes this user."),
    fmt: str = typer.Option("jsonl", "--format", help="jsonl or csv."),
    output: Path | None = typer.Option(None, "-o", "--output", help="Write here instead of stdout."),
    admin: AdminTarget = ADMIN,
) -> None:
    """Write every matching record, oldest first. Keep a copy (and the
    signed head, ``askd audit head``) somewhere the store's owner cannot
    rewrite: that copy is what later proves the trail."""
    if fmt not in ("jsonl", "csv"):
        fail("--format is jsonl or csv")
    with admin.client() as client, _out(output) as out:
        for line in client.audit(fmt=fmt, since=since, until=until, session=session, user=user):
            out.write(line + "\n")


@app.command("head")
@admin_command
def head(
    admin: AdminTarget = ADMIN,
) -> None:
    """Print the chain's signed head (JSON), for ``verify --head``."""
    with admin.client() as client:
        # As the standard library writes it: this is the line people have kept
        # in files for verify --head, and askd prints it as it always has.
        typer.echo(json.dumps(client.audit_head()))


@app.command("verify")
@command
def verify(
    file: str = typer.Argument(..., help="An export (NDJSON or CSV), or - for stdin."),
    head_file: Path | None = typer.Option(None, "--head", help="A signed head (askd audit head) the chain must reach."),
    filtered: bool = typer.Option(False, "--filtered", help="An export by session or user: check each record alone."),
    jwks: str | None = typer.Option(
        None, "--jwks", help="With --head: the JWKS to check its signature, a file or an http(s) URL. Default: the running daemon's."
    ),
    url: str | None = UrlOption,
    cacert: Path | None = CaCertOption,
    config: Path | None = ConfigOption,
) -> None:
    """Check an export offline: exit 0 when the chain is intact, else 1
    naming the first record changed, removed, inserted or reordered. With
    --head, the head's signature is checked first (against --jwks, or the
    daemon's JWKS), then that the chain reaches it."""
    head = _signed_head(head_file, jwks_of(jwks, url, config, cacert)) if head_file is not None else None
    checked = verify_chain(_records(file), filtered=filtered)
    if checked.problem is not None:
        typer.echo(checked.problem, err=True)
        raise typer.Exit(1)
    span = f"seq {checked.first}..{checked.last}" if checked.count else "no seq"
    if filtered:
        typer.echo(f"{checked.count} records, {span}, each record intact (links not checked: a filtered export)")
        return
    line = f"{checked.count} records, {span}, chain intact"
    if head is not None:
        line += ", " + _against_head(head, checked)
    typer.echo(line)


def _signed_head(path: Path, keys: Any) -> dict[str, Any]:
    """The head's signed claims (protocol section 19): only what its
    signature signs is trusted; a head that fails is one line, exit 1."""
    try:
        head = codec.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as err:
        fail(f"cannot read the head {path}: {err}")
    try:
        return verify_head(head, keys)
    except ReceiptError as err:
        typer.echo(f"the signed head {path} is refused: {err}", err=True)
        raise typer.Exit(1) from None


def _against_head(head: dict[str, Any], checked: Any) -> str:
    seq, hash_ = head["seq"], head["hash"]
    if not isinstance(seq, int) or not isinstance(hash_, str):
        fail("the signed head's seq is not a number or its hash not a string")
    if checked.last == seq and checked.last_hash == hash_:
        return "ends at the signed head"
    if checked.hashes.get(seq) == hash_:
        return f"holds the signed head (seq {seq})"
    if checked.last is not None and seq > checked.last:
        typer.echo(f"the chain ends at seq {checked.last}, before the signed head's seq {seq}: cut short", err=True)
    else:
        typer.echo(f"record seq {seq} does not match the signed head: the chain was re-sealed", err=True)
    raise typer.Exit(1)


def _records(file: str) -> Iterator[dict[str, Any]]:
    stream = sys.stdin if file == "-" else None
    try:
        handle = stream or open(file, encoding="utf-8")  # noqa: SIM115
    except OSError as err:
        fail(f"cannot read {file}: {err.strerror or err}")
    with handle if stream is None else contextlib.nullcontext(handle):
        try:
            yield from read_export(handle)
        except NotAnExport as err:
            fail(f"{file}: {err}")


@contextlib.contextmanager
def _out(path: Path | None) -> Iterator[TextIO]:
    if path is None:
        yield sys.stdout
        return
    with path.open("w", encoding="utf-8") as handle:
        yield handle
