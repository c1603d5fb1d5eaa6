"""``askd notify test``: send one sample through each notification channel
(the webhook, the mail) and report what each receiver answered.

It asks the running daemon to send it through its own channels
(``POST /admin/v1/notify/test``): that daemon's settings are what reach
people, whatever this terminal's environment says. Only when no daemon
answers (or ``--webhook-url``/``--format`` ask for another target) does it
send from this machine's settings, and it says so."""

from __future__ import annotations

import asyncio
import json
import secrets
from enum import Enum
from pathlib import Path
from typing import Any

import typer
from pydantic import AnyHttpUrl, TypeAdapter, ValidationError

from askd import state
from askd.channels import sample as notify_sample
from askd.channels.webhook import request as webhook_request
from askd.addresses import Sender
from askd.cli import clients
from askd.cli.clients import AdminUrlOption, JsonOption, TokenOption, UrlOption, command
from askd.cli.common import EXIT_ERROR, EXIT_USAGE, ConfigOption, eprint, fail, print_json, settings
from askd.client import Discovery
from askd.client.errors import ApiError, DaemonUnavailable

app = typer.Typer(help="Notifications: tell people of questions by webhook and e-mail (docs/notify.md).", no_args_is_help=True)


class Format(str, Enum):
    json = "json"
    slack = "slack"
    teams = "teams"


def _link_secret(s: Any) -> str:
    """askd's secret when this machine has it, so the sample links look
    exactly like real ones; never creates one."""
    if s.auth.secret is not None:
        return str(s.auth.secret.get_secret_value())
    return state.read_secret(s.state_dir) or secrets.token_urlsafe(32)


def _from_daemon(admin_url: str | None, token: str | None, config: Path | None, user: str, email: str | None) -> tuple[dict[str, Any] | None, str]:
    """The running daemon's report, or None and why no daemon did it."""
    with clients.admin_client(admin_url, token, config) as admin:
        try:
            admin.health()
        except DaemonUnavailable:
            return None, f"No askd answers at {admin.url}"
        try:
            return admin.notify_test(user=user, email=email), admin.url
        except ApiError as err:
            if err.status == 404 and err.code == "not_found":  # an askd older than 1.3 has no such call
                return None, f"The askd at {admin.url} cannot send a test (it is older than 1.3)"
            raise


@app.command("test")
@command
def test(
    webhook_url: str | None = typer.Option(None, "--webhook-url", help="POST here instead of notify.webhook_url."),
    fmt: Format | None = typer.Option(None, "--format", help="json, slack or teams (default: notify.format)."),
    user: str = typer.Option("you", "--user", help="The sample question's user."),
    email: str | None = typer.Option(None, "--email", help="Mail the sample to this address (with notify.smtp_url)."),
    as_json: bool = JsonOption,
    url: str | None = UrlOption,
    admin_url: str | None = AdminUrlOption,
    token: str | None = TokenOption,
    config: Path | None = ConfigOption,
) -> None:
    """Have the running daemon send one sample through each of its channels
    (webhook, e-mail), show what was sent, and print each answer (exit 1 when
    one fails). With no daemon running, send it from this machine's settings."""
    if not user:
        fail("--user must not be empty", EXIT_USAGE)
    if webhook_url is not None:
        try:
            TypeAdapter(AnyHttpUrl).validate_python(webhook_url)
        except ValidationError as err:
            fail(f"--webhook-url: {err.errors()[0]['msg']}", EXIT_USAGE)
    if email is not None:
        try:
            email = TypeAdapter(Sender).validate_python(email).email
        except ValidationError as err:
            fail(f"--email: {err.errors()[0]['msg']}", EXIT_USAGE)
    report: dict[str, Any] | None = None
    if webhook_url is not None or fmt is not None:
        why = "With --webhook-url or --format the test runs on this machine, not the daemon"
    else:
        report, why = _from_daemon(admin_url, token, config, user, email)
    if report is None:
        report = _local(why, config, url, webhook_url, fmt, user, email, as_json)
    else:
        _check_daemon_channels(report, why, email)
        if not as_json:
            typer.echo(f"The daemon at {why} sent the sample through its own channels:")
    if as_json:
        print_json(report)
    else:
        if report.get("url") is not None:
            _show_webhook(report)
        if report.get("email") is not None:
            _show_email(report["email"])
        _show_links(report["links"])
    if not report["ok"]:
        raise typer.Exit(EXIT_ERROR)


def _check_daemon_channels(report: dict[str, Any], where: str, email: str | None) -> None:
    restart = "(set it where the daemon starts, e.g. ASKD_NOTIFY__SMTP_URL=... askd serve, and restart it)"
    if report["url"] is None and report["email"] is None:
        fail(
            f"nothing to test: the daemon at {where} has no notify.webhook_url and no notify.smtp_url "
            "(set them where it starts, e.g. ASKD_NOTIFY__WEBHOOK_URL=... askd serve, and restart it)",
            EXIT_USAGE,
        )
    if email is not None and report["email"] is None:
        fail(f"--email needs notify.smtp_url: the daemon at {where} has no mail server {restart}", EXIT_USAGE)
    report["via"] = "daemon"


def _local(
    why: str, config: Path | None, url: str | None, webhook_url: str | None, fmt: Format | None, user: str, email: str | None, as_json: bool
) -> dict[str, Any]:
    """The sample sent from this machine's settings (no daemon, or a target of its own)."""
    s = settings(config, notify__webhook_url=webhook_url, notify__format=fmt.value if fmt else None)
    n = s.notify
    if email is not None and n.smtp_url is None:
        fail("--email needs notify.smtp_url (ASKD_NOTIFY__SMTP_URL): no mail server is configured", EXIT_USAGE)
    if n.webhook_url is None and n.smtp_url is None:
        fail(
            f"nothing to test: {why[0].lower() + why[1:]}, and this machine's settings name no channel: "
            "set notify.webhook_url (ASKD_NOTIFY__WEBHOOK_URL) or pass --webhook-url, "
            "or set notify.smtp_url (ASKD_NOTIFY__SMTP_URL) for e-mail",
            EXIT_USAGE,
        )
    if not as_json:
        typer.echo(f"{why}: sending from this machine's settings (its config file and ASKD_* variables).")
    link_base = str(s.public_url) if s.public_url else Discovery(config, s).url(url or clients.global_options().url)
    report = asyncio.run(
        notify_sample.run(
            n, public_url=str(s.public_url) if s.public_url else None, link_base=link_base,
            secret=_link_secret(s), user=user, email=email, timeout=s.question_timeout_seconds,
        )
    )
    return {**report, "via": "local"}


def _show_links(answer: dict[str, Any] | None) -> None:
    if answer is None:
        typer.echo("No answer links: set public_url (ASKD_PUBLIC_URL) to put them in messages.")
        return
    typer.echo("The answer links (the sample question is not in askd: they open its \"not valid\" page):")
    for option in answer["options"]:
        typer.echo(f"  {option['label']}: {option['url']}")
    typer.echo(f"  Open: {answer['open']}")


def _show_webhook(r: dict[str, Any]) -> None:
    """What was sent and what the receiver answered (a failure: one line on stderr)."""
    got = webhook_request.Attempt(r["status"], r["reason"] or "", r["body"] or "", r["error"])
    if r["ok"]:
        signed = "signed" if r["signed"] else "unsigned"
        typer.echo(f"Sent a sample question ({r['format']}, {signed}) to {r['url']}")
        answer = f"The receiver answered {r['status']} {r['reason'] or ''}".rstrip() + f" in {r['elapsedMs']} ms"
        typer.echo(f"{answer}: {r['body']!r}" if r["body"] else answer)
    else:
        verb = "answered" if r["status"] is not None else "did not answer:"
        unsigned = ""
        if r["status"] in (401, 403) and not r["signed"]:  # the likeliest cause, which the receiver cannot say
            unsigned = "; no notify.webhook_secret (ASKD_NOTIFY__WEBHOOK_SECRET) is configured, so nothing was signed"
        eprint(f"askd: the webhook at {r['url']} {verb} {got.describe()}{unsigned}")
    typer.echo("The body it sent:")
    # Indented for people to read, not the codec's compact form.
    typer.echo(json.dumps(r["payload"], indent=2, ensure_ascii=False))


def _show_email(out: dict[str, Any]) -> None:
    if out["to"] is None:
        typer.echo(f"The mail askd sends through {out['server']} (not sent: pass --email ADDRESS to send it):")
    elif out["ok"]:
        typer.echo(f"Sent a sample mail to {out['to']} through {out['server']} in {out['elapsedMs']} ms:")
    else:
        eprint(f"askd: the mail server at {out['server']} did not take the mail: {out['error']}")
        typer.echo("The mail it tried to send:")
    typer.echo(f"Subject: {out['subject']}\n\n{out['text']}", nl=False)
