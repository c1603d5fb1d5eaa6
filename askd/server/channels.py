"""The notification channels a daemon starts from its settings: the webhook
(``notify.py``) and e-mail (``mailer.py``). The hub hands each question due
for a notification to every channel started (``Webhooks.sink``)."""

from __future__ import annotations

from email.headerregistry import Address
from collections.abc import Callable
from typing import Any

from askd import links
from askd.core import Request
from askd.server.hub.hub import Hub
from askd.server.logs import get_logger
from askd.server.mailer import Mailer
from askd.server.notify import Notifier

log = get_logger("askd.daemon")


def start(
    settings: Any, hub: Hub, secret: str, link_base: str, not_before: Callable[[], float] = lambda: 0.0
) -> tuple[Notifier | None, Mailer | None]:
    """The channels the ``notify`` settings ask for, fed by ``hub``.
    ``link_base`` is where the page is (its links in notifications);
    ``not_before`` the revocation instant now, whose epoch answer links carry."""
    minter = (
        links.Minter(str(settings.public_url), secret, lambda: links.epoch_of(not_before()))
        if settings.public_url  # answer links only where people can reach them
        else None
    )
    notifier = _webhook(settings, hub, minter, link_base)
    mailer = _mailer(settings, hub, minter, link_base)
    sinks = [c.submit for c in (notifier, mailer) if c is not None]
    if sinks:

        def to_every_channel(req: Request, users: list[str], newcomers: list[str]) -> None:
            for sink in sinks:
                sink(req, users, newcomers)

        hub.webhooks.sink = to_every_channel
    return notifier, mailer


def _mailer(settings: Any, hub: Hub, minter: links.Minter | None, link_base: str) -> Mailer | None:
    n = settings.notify
    target = n.mail_server()
    if target is None or n.email_from is None:
        return None
    mailer = Mailer(
        target=target,
        sender=Address(n.email_from.name, addr_spec=n.email_from.email),
        timeout=n.timeout_seconds,
        link_base=link_base,
        store=hub.store,
        metrics=hub.metrics.emails,
        still_pending=hub.still_pending,
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


def _webhook(settings: Any, hub: Hub, minter: links.Minter | None, link_base: str) -> Notifier | None:
    n = settings.notify
    if n.webhook_url is None:
        return None
    notifier = Notifier(
        url=str(n.webhook_url),
        fmt=n.format,
        secret=n.webhook_secret.get_secret_value() if n.webhook_secret else None,
        timeout=n.timeout_seconds,
        link_base=link_base,
        metrics=hub.metrics.webhooks,
        answer_links=minter,
        still_pending=hub.still_pending,
        delivered=hub.mark_notified,
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
