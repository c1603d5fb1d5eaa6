"""The notification channels a daemon starts from its settings: the webhook,
e-mail and the Slack app, on one delivery worker fed by the hub's pipeline.
The daemon's wiring of ``askd.channels`` to its hub, so it lives with the
daemon: the channels themselves know nothing of the hub."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from email.headerregistry import Address
from functools import partial
from typing import TYPE_CHECKING

import structlog

from askd.channels import links
from askd.channels.once import take
from askd.channels.mail.channel import MailChannel
from askd.channels.slack.api import SlackApi
from askd.channels.slack.app import SlackApp
from askd.channels.webhook.channel import WebhookChannel
from askd.channels.webhook.request import redact_url
from askd.channels.worker import Worker
from askd.server.hub.hub import Hub
from askd.store.parts import EMAIL, SLACK

if TYPE_CHECKING:
    from askd.config import Settings


log = structlog.get_logger("askd.daemon")


def start(
    settings: Settings, hub: Hub, secret: str, link_base: str, not_before: Callable[[], float] = lambda: 0.0
) -> tuple[WebhookChannel | None, MailChannel | None, SlackApp | None]:
    """The channels the ``notify`` settings ask for, fed by ``hub``.
    ``link_base`` is where the page is (its links in notifications);
    ``not_before`` the revocation instant now, whose epoch answer links carry."""
    minter = (
        links.Minter(str(settings.public_url), secret, lambda: links.epoch_of(not_before()))
        if settings.public_url  # answer links only where people can reach them
        else None
    )
    pipeline = hub.webhooks
    worker = Worker(claim=partial(take, hub.store), still_pending=pipeline.still_pending, book=pipeline.deliveries)
    notifier = _webhook(settings, hub, minter, link_base)
    mailer = _mailer(settings, hub, minter, link_base)
    slack = _slack(settings, hub, minter, link_base)
    for channel in (notifier, mailer, slack):
        if channel is not None:
            worker.add(channel)
    if worker.channels:
        pipeline.sink = worker.notify
    if slack is not None:  # the messages of questions that ended while no node edited them
        sweeping = slack

        async def sweep() -> None:
            await sweeping.sweep()

        hub.tasks.spawn(sweep)
    return notifier, mailer, slack


def _slack(settings: Settings, hub: Hub, minter: links.Minter | None, link_base: str) -> SlackApp | None:
    n = settings.notify
    if n.slack_bot_token is None:
        return None
    directory = hub.store.directory

    async def slack_ids(users: Sequence[str]) -> dict[str, str]:
        return await directory.get(SLACK, users)

    app = SlackApp(
        api=SlackApi(n.slack_bot_token.get_secret_value(), str(n.slack_api_url), n.timeout_seconds),
        channel=n.slack_channel,
        link_base=link_base,
        slack_ids=slack_ids,
        posts=hub.store.posts,
        pending=hub.webhooks.still_pending,
        lookup=hub.get,
        # A message may be edited until its question's result is forgotten.
        keep_seconds=settings.max_timeout_seconds + settings.result_ttl_seconds + 60,
        minter=minter,
    )
    log.info(
        "slack.enabled",
        api=redact_url(str(n.slack_api_url)),
        channel=n.slack_channel,
        answerLinks=settings.public_url is not None,
        afterSeconds=n.after_seconds,
        onlyOffline=n.only_offline,
    )
    return app


def _mailer(settings: Settings, hub: Hub, minter: links.Minter | None, link_base: str) -> MailChannel | None:
    n = settings.notify
    target = n.mail_server()
    if target is None or n.email_from is None:
        return None
    mailer = MailChannel(
        target=target,
        sender=Address(n.email_from.name, addr_spec=n.email_from.email),
        timeout=n.timeout_seconds,
        link_base=link_base,
        addresses=partial(hub.store.directory.get, EMAIL),  # the directory's e-mail addresses
        metrics=hub.metrics.emails,
        links=minter.links_for if minter is not None else None,
    )
    log.info(
        "email.enabled",
        server=mailer.target.shown,
        sender=n.email_from.email,
        answerLinks=settings.public_url is not None,
        afterSeconds=n.after_seconds,
        onlyOffline=n.only_offline,
    )
    return mailer


def _webhook(settings: Settings, hub: Hub, minter: links.Minter | None, link_base: str) -> WebhookChannel | None:
    n = settings.notify
    if n.webhook_url is None:
        return None
    notifier = WebhookChannel(
        url=str(n.webhook_url),
        fmt=n.format,
        secret=n.webhook_secret.get_secret_value() if n.webhook_secret else None,
        timeout=n.timeout_seconds,
        link_base=link_base,
        metrics=hub.metrics.webhooks,
        answer_links=minter,
        delivered=hub.webhooks.delivered,
    )
    log.info(
        "webhook.enabled",
        url=notifier.target,
        format=n.format,
        signed=n.webhook_secret is not None,
        answerLinks=settings.public_url is not None,
        afterSeconds=n.after_seconds,
        onlyOffline=n.only_offline,
    )
    return notifier
