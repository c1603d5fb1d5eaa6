"""The channels' own Prometheus counters, counted as deliveries happen;
the daemon's ``askd.server.metrics`` registers them with the rest."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter


class WebhookMetrics:
    """Counted by the webhook channel as deliveries happen."""

    def __init__(self, registry: CollectorRegistry) -> None:
        self.delivered = Counter("askd_webhook_delivered", "Webhook deliveries the receiver accepted (2xx).", registry=registry)
        self.retried = Counter("askd_webhook_retried", "Failed webhook attempts that will be tried again.", registry=registry)
        self.failed = Counter(
            "askd_webhook_failed",
            "Webhook deliveries given up: rejected (a 4xx), exhausted (every attempt failed), or dropped (queue full).",
            ["reason"],
            registry=registry,
        )
        for reason in ("rejected", "exhausted", "dropped"):
            self.failed.labels(reason)  # exported as 0 from the start


class EmailMetrics:
    """Counted by the mail channel, one per mail as it ends."""

    RESULTS = ("sent", "failed", "dropped")

    def __init__(self, registry: CollectorRegistry) -> None:
        self.emails = Counter(
            "askd_emails",
            "Notification mails: sent (the server took it), failed (refused, or every attempt failed), dropped (too many at once).",
            ["result"],
            registry=registry,
        )
        for result in self.RESULTS:
            self.emails.labels(result)  # exported as 0 from the start
