"""A real SMTP server for tests (``aiosmtpd``) on 127.0.0.1, a free port, in
the test's event loop. It takes each mail as its script says (``OK``, an
SMTP reply such as ``"451 try later"``, or ``HANG`` to never answer the
DATA) and keeps what arrived, parsed, and whether it came over TLS (from
the first byte, or after STARTTLS), as it notes for each login."""

from __future__ import annotations

import asyncio
import logging
import ssl
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from email import message_from_bytes, policy
from email.message import EmailMessage
from typing import Any

import pytest
import trustme
from aiosmtpd.smtp import SMTP, AuthResult, Envelope, Session

OK = "250 OK"
HANG = "hang"
USER, PASSWORD = "askd-mailer", "p@ss:w/rd-s3cret"  # needs quoting in a URL


@dataclass
class Received:
    mail_from: str
    rcpt_tos: list[str]
    message: EmailMessage
    tls: bool = False

    @property
    def to(self) -> str:
        return str(self.message["To"])

    def part(self, subtype: str) -> str:
        """The text of the ``text/<subtype>`` part (its lines end in ``\n``,
        not SMTP's CRLF)."""
        body = self.message.get_body(preferencelist=(subtype,))
        assert body is not None and body.get_content_type() == f"text/{subtype}", self.message
        return str(body.get_content()).replace("\r\n", "\n")


@dataclass
class Mailbox:
    port: int = 0
    script: list[str] = field(default_factory=list)  # one per mail; then OK
    got: list[Received] = field(default_factory=list)
    logins: list[str] = field(default_factory=list)
    tls_logins: list[str] = field(default_factory=list)  # those of logins made inside TLS
    release: asyncio.Event = field(default_factory=asyncio.Event)
    arrived: asyncio.Condition = field(default_factory=asyncio.Condition)

    @property
    def url(self) -> str:
        return f"smtp://127.0.0.1:{self.port}"

    def to(self, address: str) -> list[Received]:
        return [m for m in self.got if address in m.rcpt_tos]

    async def wait_for(self, n: int, timeout: float = 5.0) -> list[Received]:
        """Until ``n`` mails arrived; returns them all."""
        async with self.arrived:
            await asyncio.wait_for(self.arrived.wait_for(lambda: len(self.got) >= n), timeout)
        return self.got

    async def quiet(self, window: float, expect: int) -> None:
        """Assert the count stays at ``expect`` for ``window`` seconds."""
        await asyncio.sleep(window)
        assert len(self.got) == expect, [m.message["Subject"] for m in self.got]

    # ---- aiosmtpd's handler hooks --------------------------------------

    async def handle_DATA(self, server: SMTP, session: Session, envelope: Envelope) -> str:
        action = self.script.pop(0) if self.script else OK
        if action == HANG:
            await self.release.wait()
            return "421 going away"
        if action == OK:
            assert isinstance(envelope.content, bytes)
            msg = message_from_bytes(envelope.content, policy=policy.default)
            assert isinstance(msg, EmailMessage)
            async with self.arrived:
                self.got.append(Received(str(envelope.mail_from), list(envelope.rcpt_tos), msg, _over_tls(server)))
                self.arrived.notify_all()
        return action

    def authenticate(self, server: SMTP, session: Session, envelope: Envelope, mechanism: str, data: Any) -> AuthResult:
        ok = data.login.decode() == USER and data.password.decode() == PASSWORD
        if ok:
            self.logins.append(data.login.decode())
            if _over_tls(server):
                self.tls_logins.append(data.login.decode())
        return AuthResult(success=ok)


def _over_tls(server: SMTP) -> bool:
    # After STARTTLS aiosmtpd swaps in the TLS transport; with TLS from the
    # first byte the listener's transport is one.
    return server.transport is not None and server.transport.get_extra_info("ssl_object") is not None


async def serve(box: Mailbox, *, tls: ssl.SSLContext | None = None, **options: Any) -> asyncio.Server:
    """Listen for ``box`` on a free port; with ``tls``, TLS from the first
    byte (``options``: aiosmtpd's SMTP's, e.g. ``tls_context`` for STARTTLS)."""
    loop = asyncio.get_running_loop()
    options = {"auth_require_tls": False, **options}
    server = await loop.create_server(
        lambda: SMTP(box, hostname="mail.test", authenticator=box.authenticate, **options),
        "127.0.0.1",
        0,
        ssl=tls,
    )
    box.port = server.sockets[0].getsockname()[1]
    return server


@asynccontextmanager
async def listening(box: Mailbox, **options: Any) -> AsyncIterator[Mailbox]:
    """``box`` served (``options``: :func:`serve`'s) until the block ends."""
    logging.getLogger("mail.log").setLevel(logging.WARNING)  # aiosmtpd logs each SMTP command at info
    server = await serve(box, **options)
    try:
        yield box
    finally:
        box.release.set()
        server.close()
        await server.wait_closed()


def server_tls(ca: trustme.CA, name: str = "127.0.0.1") -> ssl.SSLContext:
    """The mail server's side of TLS: a certificate for ``name`` from ``ca``."""
    tls = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ca.issue_cert(name).configure_cert(tls)
    return tls


@pytest.fixture
async def mailbox() -> AsyncIterator[Mailbox]:
    async with listening(Mailbox()) as box:
        yield box
