"""``askd notify test``: send a sample webhook delivery, as the daemon would,
and show what the receiver answered."""

from __future__ import annotations

import asyncio
import time
import uuid
from enum import Enum
from pathlib import Path
from typing import Any

import httpx
import typer
from pydantic import AnyHttpUrl, TypeAdapter, ValidationError

from askd import webhook
from askd.cli import clients
from askd.cli.clients import JsonOption, UrlOption, command
from askd.cli.common import EXIT_ERROR, EXIT_USAGE, ConfigOption, eprint, fail, print_json, settings
from askd.client import Discovery
from askd.core.events import isotime

app = typer.Typer(help="Webhook notifications: tell people of questions (docs/notify.md).", no_args_is_help=True)

SAMPLE_SESSION = "askd-notify-test"


class Format(str, Enum):
    json = "json"
    slack = "slack"


def sample_event(user: str, link_base: str, timeout: float) -> dict[str, Any]:
    """A ``question.asked`` body like a real one, marked ``"test": true``."""
    now = time.time()
    question = {
        "question": "This is a test from `askd notify test`. Did it arrive?",
        "header": "askd test",
        "options": [{"label": "Yes"}, {"label": "No"}],
    }
    description = {
        "userId": user,
        "sessionId": SAMPLE_SESSION,
        "requestId": f"test-{uuid.uuid4().hex[:12]}",
        "questions": [question],
        "createdAt": isotime(now),
        "expiresAt": isotime(now + timeout),
    }
    return {**webhook.event(description, webhook.inbox_url(link_base, SAMPLE_SESSION)), "test": True}


async def _post_once(url: str, body: bytes, secret: str | None, timeout: float) -> webhook.Attempt:
    async with httpx.AsyncClient(follow_redirects=False) as client:
        return await webhook.post(client, url, body, secret, timeout)


@app.command("test")
@command
def test(
    webhook_url: str | None = typer.Option(None, "--webhook-url", help="POST here instead of notify.webhook_url."),
    fmt: Format | None = typer.Option(None, "--format", help="json or slack (default: notify.format)."),
    user: str = typer.Option("you", "--user", help="The sample question's user."),
    as_json: bool = JsonOption,
    url: str | None = UrlOption,
    config: Path | None = ConfigOption,
) -> None:
    """Send one sample delivery to the configured webhook and print the answer (exit 1 when it fails)."""
    if not user:
        fail("--user must not be empty", EXIT_USAGE)
    if webhook_url is not None:
        try:
            TypeAdapter(AnyHttpUrl).validate_python(webhook_url)
        except ValidationError as err:
            fail(f"--webhook-url: {err.errors()[0]['msg']}", EXIT_USAGE)
    flags = {"notify__webhook_url": webhook_url, "notify__format": fmt.value if fmt else None}
    s = settings(config, **flags)
    n = s.notify
    if n.webhook_url is None:
        fail("no webhook to test: set notify.webhook_url (ASKD_NOTIFY__WEBHOOK_URL) or pass --webhook-url", EXIT_USAGE)
    target, secret = str(n.webhook_url), n.webhook_secret.get_secret_value() if n.webhook_secret else None
    link_base = str(s.public_url) if s.public_url else Discovery(config, s).url(url or clients.global_options().url)
    body = webhook.render(n.format, sample_event(user, link_base, s.question_timeout_seconds))
    got = asyncio.run(_post_once(target, body, secret, n.timeout_seconds))
    shown = webhook.redact_url(target)
    if as_json:
        print_json(
            {
                "ok": got.ok,
                "url": shown,
                "format": n.format,
                "signed": secret is not None,
                "status": got.status,
                "reason": got.reason or None,
                "body": got.excerpt if got.status is not None else None,
                "error": got.error,
                "elapsedMs": round(got.elapsed * 1000),
            }
        )
        if not got.ok:
            raise typer.Exit(EXIT_ERROR)
        return
    if not got.ok:
        verb = "answered" if got.status is not None else "did not answer:"
        unsigned = ""
        if got.status in (401, 403) and secret is None:  # the likeliest cause, which the receiver cannot say
            unsigned = "; no notify.webhook_secret (ASKD_NOTIFY__WEBHOOK_SECRET) is configured, so nothing was signed"
        eprint(f"askd: the webhook at {shown} {verb} {got.describe()}{unsigned}")
        raise typer.Exit(EXIT_ERROR)
    signed = "signed" if secret else "unsigned"
    typer.echo(f"Sent a sample question ({n.format}, {signed}) to {shown}")
    answer = f"The receiver answered {got.status} {got.reason} in {round(got.elapsed * 1000)} ms"
    typer.echo(f"{answer}: {got.excerpt!r}" if got.excerpt else answer)
