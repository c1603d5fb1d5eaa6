"""``askd notify test``: show what each configured channel would send (the
webhook's body, the mail's text, the links in them) and send one sample
through each, as the daemon would, reporting what the receiver answered."""

from __future__ import annotations

import asyncio
import json
import secrets
import uuid
from email.headerregistry import Address
from enum import Enum
from pathlib import Path
from typing import Any

import httpx
import typer
from pydantic import AnyHttpUrl, NameEmail, TypeAdapter, ValidationError

from askd import links, mail, state, webhook
from askd.cli import clients
from askd.cli.clients import JsonOption, UrlOption, command
from askd.cli.common import EXIT_ERROR, EXIT_USAGE, ConfigOption, eprint, fail, print_json, settings
from askd.client import Discovery
from askd.core import AskInput, Limits, Request
from askd.core.registry import Registry

app = typer.Typer(help="Notifications: tell people of questions by webhook and e-mail (docs/notify.md).", no_args_is_help=True)

SAMPLE_SESSION = "askd-notify-test"


class Format(str, Enum):
    json = "json"
    slack = "slack"


SAMPLE_QUESTION = {
    "question": "This is a test from `askd notify test`. Did it arrive?",
    "header": "askd test",
    "options": [{"label": "Yes"}, {"label": "No"}],
}


def sample_request(user: str, timeout: float) -> Request:
    """A pending question asked of ``user``, made by the core as an ask
    would be (it exists nowhere else: its links open askd's "not valid" page)."""
    registry = Registry(Limits(question_timeout=timeout, max_timeout=timeout), new_id=lambda: f"test-{uuid.uuid4().hex[:12]}")
    req, _ = registry.prepare_ask(AskInput(SAMPLE_SESSION, user, [SAMPLE_QUESTION]))
    return req


def _link_secret(s: Any) -> str:
    """askd's secret when this machine has it, so the sample links look
    exactly like real ones; never creates one."""
    if s.auth.secret is not None:
        return str(s.auth.secret.get_secret_value())
    return state.read_secret(s.state_dir) or secrets.token_urlsafe(32)


async def _post_once(url: str, body: bytes, secret: str | None, timeout: float) -> webhook.Attempt:
    async with httpx.AsyncClient(follow_redirects=False) as client:
        return await webhook.post(client, url, body, secret, timeout)


@app.command("test")
@command
def test(
    webhook_url: str | None = typer.Option(None, "--webhook-url", help="POST here instead of notify.webhook_url."),
    fmt: Format | None = typer.Option(None, "--format", help="json or slack (default: notify.format)."),
    user: str = typer.Option("you", "--user", help="The sample question's user."),
    email: str | None = typer.Option(None, "--email", help="Mail the sample to this address (with notify.smtp_url)."),
    as_json: bool = JsonOption,
    url: str | None = UrlOption,
    config: Path | None = ConfigOption,
) -> None:
    """Send one sample through each configured channel (webhook, e-mail), show
    what was sent, and print each answer (exit 1 when one fails)."""
    if not user:
        fail("--user must not be empty", EXIT_USAGE)
    if webhook_url is not None:
        try:
            TypeAdapter(AnyHttpUrl).validate_python(webhook_url)
        except ValidationError as err:
            fail(f"--webhook-url: {err.errors()[0]['msg']}", EXIT_USAGE)
    if email is not None:
        try:
            email = TypeAdapter(NameEmail).validate_python(email).email
        except ValidationError as err:
            fail(f"--email: {err.errors()[0]['msg']}", EXIT_USAGE)
    flags = {"notify__webhook_url": webhook_url, "notify__format": fmt.value if fmt else None}
    s = settings(config, **flags)
    n = s.notify
    if email is not None and n.smtp_url is None:
        fail("--email needs notify.smtp_url (ASKD_NOTIFY__SMTP_URL): no mail server is configured", EXIT_USAGE)
    if n.webhook_url is None and n.smtp_url is None:
        fail(
            "nothing to test: set notify.webhook_url (ASKD_NOTIFY__WEBHOOK_URL) or pass --webhook-url, "
            "or set notify.smtp_url (ASKD_NOTIFY__SMTP_URL) for e-mail",
            EXIT_USAGE,
        )
    link_base = str(s.public_url) if s.public_url else Discovery(config, s).url(url or clients.global_options().url)
    req = sample_request(user, s.question_timeout_seconds)
    description = req.describe()
    inbox = webhook.inbox_url(link_base, SAMPLE_SESSION)
    # Answer links only with public_url, as the daemon makes them.
    answer = links.link_set(str(s.public_url), _link_secret(s), req, user) if s.public_url else None
    report: dict[str, Any] = {"ok": True, **dict.fromkeys(WEBHOOK_KEYS), "email": None, "links": answer}
    if n.webhook_url is not None:
        hook = _webhook(n, description, inbox, {user: answer} if answer else None, as_json)
        report.update(hook, ok=hook["ok"])
    if n.smtp_url is not None:
        report["email"] = _email(n, description, inbox, answer, email, as_json)
        report["ok"] = report["ok"] and report["email"]["ok"]
    if as_json:
        print_json(report)
    else:
        _show_links(answer)
    if not report["ok"]:
        raise typer.Exit(EXIT_ERROR)


#: The webhook's part of ``--json`` (null without a webhook); ``payload`` is the body sent.
WEBHOOK_KEYS = ("url", "format", "signed", "status", "reason", "body", "error", "elapsedMs", "payload")


def _show_links(answer: dict[str, Any] | None) -> None:
    if answer is None:
        typer.echo("No answer links: set public_url (ASKD_PUBLIC_URL) to put them in messages.")
        return
    typer.echo("The answer links (the sample question is not in askd: they open its \"not valid\" page):")
    for option in answer["options"]:
        typer.echo(f"  {option['label']}: {option['url']}")
    typer.echo(f"  Open: {answer['open']}")


def _webhook(
    n: Any, description: dict[str, Any], inbox: str, answer: dict[str, dict[str, Any]] | None, as_json: bool
) -> dict[str, Any]:
    """POST the sample once; print (unless ``as_json``) what was sent and answered."""
    target, secret = str(n.webhook_url), n.webhook_secret.get_secret_value() if n.webhook_secret else None
    ev = {**webhook.event(description, inbox, None, answer), "test": True}
    body = webhook.render(n.format, ev, next(iter(answer.values())) if answer else None)
    got = asyncio.run(_post_once(target, body, secret, n.timeout_seconds))
    shown = webhook.redact_url(target)
    if not as_json:
        if got.ok:
            signed = "signed" if secret else "unsigned"
            typer.echo(f"Sent a sample question ({n.format}, {signed}) to {shown}")
            answer = f"The receiver answered {got.status} {got.reason} in {round(got.elapsed * 1000)} ms"
            typer.echo(f"{answer}: {got.excerpt!r}" if got.excerpt else answer)
        else:
            verb = "answered" if got.status is not None else "did not answer:"
            unsigned = ""
            if got.status in (401, 403) and secret is None:  # the likeliest cause, which the receiver cannot say
                unsigned = "; no notify.webhook_secret (ASKD_NOTIFY__WEBHOOK_SECRET) is configured, so nothing was signed"
            eprint(f"askd: the webhook at {shown} {verb} {got.describe()}{unsigned}")
        typer.echo("The body it sent:")
        typer.echo(json.dumps(json.loads(body), indent=2, ensure_ascii=False))
    return {
        "ok": got.ok,
        "url": shown,
        "format": n.format,
        "signed": secret is not None,
        "status": got.status,
        "reason": got.reason or None,
        "body": got.excerpt if got.status is not None else None,
        "error": got.error,
        "elapsedMs": round(got.elapsed * 1000),
        "payload": json.loads(body),
    }


def _email(
    n: Any, description: dict[str, Any], inbox: str, answer: dict[str, Any] | None, to: str | None, as_json: bool
) -> dict[str, Any]:
    """Mail the sample to ``to`` once (None: only show it)."""
    target = n.mail_server()
    sender = Address(n.email_from.name, addr_spec=n.email_from.email)
    content = mail.compose(description, inbox=inbox, links=answer)
    out: dict[str, Any] = {
        "ok": True,
        "sent": False,
        "server": target.shown,
        "from": str(sender),
        "to": to,
        "subject": content.subject,
        "text": content.text,
        "error": None,
        "elapsedMs": None,
    }
    if to is not None:
        got = asyncio.run(mail.send(target, mail.message(content, sender, to), n.timeout_seconds))
        out.update(ok=got.ok, sent=got.ok, error=got.error, elapsedMs=round(got.elapsed * 1000))
    if as_json:
        return out
    if to is None:
        typer.echo(f"The mail askd sends through {target.shown} (not sent: pass --email ADDRESS to send it):")
    elif out["ok"]:
        typer.echo(f"Sent a sample mail to {to} through {target.shown} in {out['elapsedMs']} ms:")
    else:
        eprint(f"askd: the mail server at {target.shown} did not take the mail: {out['error']}")
        typer.echo("The mail it tried to send:")
    typer.echo(f"Subject: {content.subject}\n\n{content.text}", nl=False)
    return out
