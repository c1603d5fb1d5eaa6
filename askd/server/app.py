"""The daemon: two listeners over one hub, started and stopped cleanly.

The public listener serves ``/ws``, ``/v1/...``, ``/healthz``, the web
page and the answer link pages (``/a/...``); the admin listener serves
``/admin/v1/...``, ``/metrics`` and ``/healthz``. Neither serves the other's
paths.
"""

from __future__ import annotations

import asyncio
import os
import secrets
import signal
import socket
import sys
import time
from collections.abc import Callable
from typing import Any

import tornado.httpserver
import tornado.netutil
import tornado.web

from askd import __version__, state
from askd.channels.mail.channel import MailChannel
from askd.channels.slack.app import SlackApp
from askd.channels.webhook.channel import WebhookChannel
from askd.config import ConfigError, Settings
from askd.receipts import KeyFileError, keyring
from askd.server.context import Context
from askd.server.front_door import tls
from askd.server.front_door.door import CappedHTTPServer, ConnectionCaps, HostRule
from askd.server.front_door.proxy import Application, origin_of, parse_ip, public_base
from askd.server.from_settings import limits_from, next_steps, notify_policy
from askd.server.gc_tuning import settle_gc
from askd.server.http import admin_api, agent_api, audit_api, link_page, web
from askd.server.http.base import access_log
from askd.server.http.health import HealthHandler, NotFoundHandler, WrongHostHandler
from askd.server.http.jwks import JwksHandler
from askd.server.http.receipting import Receipts
from askd.server.hub.hub import Hub
from askd.server import channels_setup
from askd.server.audit_retention import AuditRetention
from askd.server.logs import get_logger
from askd.server.metrics import AuditCollector
from askd.server.ws.pinger import Pinger
from askd.server.ws.ws import WsHandler
from askd.store import open_store

log = get_logger("askd.daemon")

# How long a stop waits for close handshakes and 503s to go out.
STOP_GRACE_SECONDS = 2.0

# When a proxy blip drops every user, they all reconnect at once; Tornado's
# default backlog (128) overflows and each dropped SYN costs its client a 1 s+
# retransmit. The kernel caps this at net.core.somaxconn.
LISTEN_BACKLOG = 4096


class ListenError(Exception):
    pass


def _trusted_peer(networks: Any) -> Callable[[str], bool]:
    """Whether a TCP peer is one of ``trusted_proxies``: each carries many
    clients, so the per-address cap does not apply to it."""
    nets = tuple(networks)

    def trusted(address: str) -> bool:
        ip = parse_ip(address) if nets else None
        return ip is not None and any(ip in net for net in nets)

    return trusted


class Daemon:
    def __init__(self, settings: Settings, clock: Callable[[], float] = time.time) -> None:
        """``clock``: the core's (its deadlines'); tests move it."""
        self.settings = settings
        self.ssl = tls.server_context(settings.tls)  # ConfigError before anything is touched
        self.scheme = "https" if self.ssl else "http"
        secret = settings.auth.secret.get_secret_value() if settings.auth.secret else None
        if secret is None:
            secret = state.load_or_create_secret(settings.state_dir)
        try:  # before the store is opened: a key that does not load touches nothing
            keys = keyring(secret, settings.receipts.key_file, settings.receipts.previous_key_files)
        except KeyFileError as err:
            env = "ASKD_" + err.setting.upper().replace(".", "__")
            raise ConfigError(f"invalid setting {err.setting} ({env}): {err.detail}") from None
        node_id = settings.node_id or f"{socket.gethostname().split('.')[0]}-{secrets.token_hex(3)}"
        # Refuses (StoreError, one line naming the file) a store that is not askd's.
        self.store = open_store(settings.store, settings.state_dir, node_id, settings.node_ttl_seconds)
        self.hub = Hub(
            limits_from(settings), self.store, node_id=node_id, notify=notify_policy(settings), on_revoked=self._revoke_before,
            clock=clock,
        )
        self.notifier: WebhookChannel | None = None
        self.mailer: MailChannel | None = None
        self.slack: SlackApp | None = None
        self.audit_retention = AuditRetention(self.store.audit, settings.audit.retention_days)
        if self.store.audit is not None:
            self.hub.metrics.prom.register(AuditCollector(self.store.audit))
        public_origin = origin_of(str(settings.public_url)) if settings.public_url else None
        # One timer pings every WebSocket, not Tornado's task per connection
        # (websocket_ping_interval): docs/performance.md, the memory per idle connection.
        pinger = Pinger(settings.ws.ping_interval_seconds, min(settings.ws.ping_timeout_seconds, settings.ws.ping_interval_seconds))
        self.ctx = Context(
            hub=self.hub,
            secret=secret,
            settings=settings,
            version=__version__,
            pinger=pinger,
            public_origin=public_origin,
            not_before=settings.auth.not_before,
            receipts=Receipts(keys, str(settings.public_url) if settings.public_url else None),
        )
        self.port = self.admin_port = 0
        self._servers: list[tornado.httpserver.HTTPServer] = []
        # Each listener its own pool: a flood of the public port never
        # crowds out the admin API (docs/security.md).
        limits, exempt = settings.limits, _trusted_peer(settings.trusted_proxies)
        self.caps = ConnectionCaps(limits.max_connections, limits.max_connections_per_address, exempt)
        self.admin_caps = ConnectionCaps(
            limits.max_admin_connections, limits.max_connections_per_address, exempt, "limits.max_admin_connections"
        )

    def _apps(self) -> tuple[tornado.web.Application, tornado.web.Application]:
        s, ctx = self.settings, self.ctx
        public_host = [s.public_url.host] if s.public_url is not None and s.public_url.host else []
        common: dict[str, Any] = {
            "default_handler_class": NotFoundHandler,
            "default_handler_args": {"ctx": ctx},
            "log_function": access_log,
            "trusted": s.trusted_proxies,
            "hosts": HostRule([s.host, s.admin_host], [*public_host, *s.allowed_hosts]),
            "wrong_host": (WrongHostHandler, {"ctx": ctx}),
            "hsts": self.ssl is not None,
        }
        public = Application(
            [
                (r"/ws", WsHandler, {"ctx": ctx}),
                (r"/healthz", HealthHandler, {"ctx": ctx}),
                (r"/\.well-known/jwks\.json", JwksHandler, {"ctx": ctx}),
                *agent_api.routes(ctx),
                *audit_api.public_routes(ctx),
                *web.routes(ctx),
                *link_page.routes(ctx),
            ],
            websocket_max_message_size=s.limits.max_message_bytes,
            **common,
        )
        admin = Application(
            [(r"/healthz", HealthHandler, {"ctx": ctx, "detailed": True}), *admin_api.routes(ctx), *audit_api.admin_routes(ctx)],
            **common,
        )
        return public, admin

    def _bind(self, host: str, port: int) -> list[socket.socket]:
        try:
            return tornado.netutil.bind_sockets(port, host, backlog=LISTEN_BACKLOG)
        except OSError as err:
            raise ListenError(f"cannot listen on {host}:{port}: {err.strerror or err}") from None

    def _serve(self, app: tornado.web.Application, sockets: list[socket.socket], caps: ConnectionCaps) -> None:
        # A body declared over max_request_bytes gets a 413 from the handler
        # before it is read; an API handler counts a chunked one and answers
        # 413 at the limit. Tornado's max_body_size stays for the others.
        limits = self.settings.limits
        server = CappedHTTPServer(
            app,
            caps=caps,
            header_timeout=limits.header_timeout_seconds,
            max_body_size=limits.max_request_bytes,
            body_timeout=limits.body_timeout_seconds,
            idle_connection_timeout=limits.idle_timeout_seconds,
            ssl_options=self.ssl,
        )
        server.add_sockets(sockets)
        self._servers.append(server)

    async def start(self) -> None:
        loaded = await self.hub.load()
        # What came back, as people count it: questions still waiting (those
        # overdue end before the listeners serve) and results kept for agents.
        pending = self.hub.counts()["pending"]
        kept = {"pending": pending, "results": loaded - pending}
        # The later of the configured auth.not_before and the last revoke-all.
        self.ctx.not_before = max(self.settings.auth.not_before, await self.store.load_not_before())
        public, admin = self._apps()
        s = self.settings
        # Bound first (the ports are known, and connections wait in the
        # backlog), served only once questions that passed their deadline
        # while no daemon ran have ended: no tab is shown a question already
        # over, and no client hears of that end as if it happened live.
        public_sockets = self._bind(s.host, s.port)
        try:
            admin_sockets = self._bind(s.admin_host, s.admin_port)
        except ListenError:
            for sock in public_sockets:
                sock.close()
            raise
        self.port = public_sockets[0].getsockname()[1]
        self.admin_port = admin_sockets[0].getsockname()[1]
        self.ctx.ports = {"port": self.port, "admin_port": self.admin_port}
        try:
            self._start_notifier()
            await self.hub.start()
        except BaseException:
            for sock in public_sockets + admin_sockets:
                sock.close()
            raise
        self._serve(public, public_sockets, self.caps)
        self._serve(admin, admin_sockets, self.admin_caps)
        self.audit_retention.start()
        runtime: dict[str, Any] = {
            "port": self.port,
            "admin_port": self.admin_port,
            "pid": os.getpid(),
            "host": s.host,
            "admin_host": s.admin_host,
            "scheme": self.scheme,  # both listeners
            "version": __version__,
            "started_at": time.time(),
            "node": self.hub.node_id,
            "store": self.store.kind,
        }
        if s.public_url is not None:
            runtime["public_url"] = str(s.public_url)  # for `askd open` run without the daemon's config
        state.write_runtime(s.state_dir, runtime)
        log.info(
            "listening",
            scheme=self.scheme,
            host=s.host,
            port=self.port,
            admin_host=s.admin_host,
            admin_port=self.admin_port,
            version=__version__,
            pid=os.getpid(),
            node=self.hub.node_id,
            store=self.store.kind,
            **kept,
            loop=type(asyncio.get_running_loop()).__module__.split(".")[0],
        )

    def _revoke_before(self, at: float) -> None:
        """A revocation reached this node: refuse older tokens, and close the
        sockets that opened with one (4001, as when a token expires)."""
        self.ctx.not_before = max(self.ctx.not_before, at)
        revoked = [
            p for p in self.ctx.pinger.peers() if isinstance(p, WsHandler) and (p.issued_at or 0) < self.ctx.not_before
        ]
        log.info("tokens.revoked", notBefore=self.ctx.not_before, closing=len(revoked))
        for peer in revoked:
            peer.token_ended("token revoked")

    def _start_notifier(self) -> None:
        base = public_base(self.settings, self.scheme, self.port)
        self.notifier, self.mailer, self.slack = channels_setup.start(self.settings, self.hub, self.ctx.secret, base, lambda: self.ctx.not_before)

    async def stop(self) -> None:
        """Stop accepting, fail waiting agents with 503, close sockets with 1001."""
        log.info("stopping", pending=self.hub.counts()["pending"])
        for server in self._servers:
            server.stop()
        if self.notifier is not None:
            await self.notifier.aclose()  # first: a late delivery must not re-arm the hub's timer
        if self.mailer is not None:
            await self.mailer.aclose()
        if self.slack is not None:
            await self.slack.aclose()
        self.audit_retention.stop()
        self.hub.shutdown()
        self.ctx.pinger.stop()
        deadline = time.monotonic() + STOP_GRACE_SECONDS
        # Let woken agents get their 503 and tabs finish the close handshake.
        while ((counts := self.hub.counts())["connections"] or counts["waiting"]) and time.monotonic() < deadline:
            await asyncio.sleep(0.02)
        for server in self._servers:
            try:
                await asyncio.wait_for(server.close_all_connections(), max(0.1, deadline - time.monotonic()))
            except asyncio.TimeoutError:
                pass
        state.remove_runtime(self.settings.state_dir, os.getpid())
        await self.store.aclose()
        log.info("stopped")


async def serve(settings: Settings) -> None:
    """Run until SIGTERM or SIGINT, then stop gracefully."""
    daemon = Daemon(settings)
    await daemon.start()
    settle_gc()
    if sys.stderr.isatty():  # for a person at a terminal; logs collected elsewhere stay pure
        print(next_steps(settings, daemon.scheme, daemon.port), file=sys.stderr, flush=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    try:
        await stop.wait()
    finally:
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.remove_signal_handler(sig)
        await daemon.stop()

