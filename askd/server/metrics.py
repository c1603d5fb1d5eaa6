"""Prometheus metrics. Counters and gauges are read from the registry when
scraped (nothing on the hot path); only time-to-answer, the webhook
deliveries and the mails are counted as they happen."""

from __future__ import annotations

from collections.abc import Iterator

from prometheus_client import CollectorRegistry, Histogram, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
from prometheus_client.registry import Collector

from askd.channels.metrics import EmailMetrics, WebhookMetrics
from askd.core.registry import Registry
from askd.store.parts import AuditTrail

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"


class _RegistryCollector(Collector):
    def __init__(self, registry: Registry) -> None:
        self._registry = registry

    def collect(self) -> Iterator[GaugeMetricFamily | CounterMetricFamily]:
        s = self._registry.stats()
        yield GaugeMetricFamily("askd_connections", "Open WebSocket connections.", value=s["connections"])
        yield GaugeMetricFamily("askd_users_online", "Users with at least one open connection.", value=s["users"])
        yield GaugeMetricFamily("askd_pending_questions", "Questions waiting for an answer.", value=s["pending"])
        yield CounterMetricFamily("askd_questions_asked", "Questions asked.", value=s["asked"])
        yield CounterMetricFamily("askd_questions_answered", "Questions answered.", value=s["answered"])
        yield CounterMetricFamily("askd_questions_timed_out", "Questions that timed out.", value=s["timedOut"])
        yield CounterMetricFamily("askd_questions_cancelled", "Questions cancelled with their session.", value=s["cancelled"])
        yield CounterMetricFamily("askd_questions_declined", "Questions the person declined to answer.", value=s["declined"])
        yield CounterMetricFamily("askd_questions_repushed", "Pending questions re-pushed on subscribe.", value=s["repushed"])


class AuditCollector(Collector):
    """``askd_audit_records_total``: records sealed into the audit chain
    (its head's seq: on a shared store, the cluster's)."""

    def __init__(self, trail: AuditTrail) -> None:
        self._trail = trail

    def collect(self) -> Iterator[CounterMetricFamily]:
        yield CounterMetricFamily("askd_audit_records", "Audit records sealed into the chain.", value=self._trail.sealed)


class Metrics:
    def __init__(self, registry: Registry) -> None:
        self.prom = CollectorRegistry(auto_describe=True)
        self.prom.register(_RegistryCollector(registry))
        self.time_to_answer = Histogram(
            "askd_time_to_answer_seconds",
            "Time from ask to answer.",
            buckets=(0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 900, 1800, 3600),
            registry=self.prom,
        )
        self.webhooks = WebhookMetrics(self.prom)
        self.emails = EmailMetrics(self.prom)

    def render(self) -> bytes:
        return generate_latest(self.prom)
