"""Mail's server: ``notify.smtp_url`` parsed (``SmtpTarget``, with its TLS
decided: STARTTLS required with a password) and one attempt to hand a
mail to it, with ``aiosmtplib``.

``notify.smtp_url`` may hold the server's password, so only
:attr:`SmtpTarget.shown` of it is ever printed or logged. The settings
import this module: the SMTP client is imported where it is used.
"""

from __future__ import annotations

import asyncio
import ssl
import time
from dataclasses import dataclass, field
from email.message import EmailMessage
from urllib.parse import unquote, urlsplit

DEFAULT_PORTS = {"smtp": 25, "smtps": 465}

@dataclass(frozen=True, slots=True)
class SmtpTarget:
    """Where mail goes: ``smtps`` is TLS from the first byte; ``smtp``
    upgrades with STARTTLS when the server offers it, and must when there
    is a password to send (unless ``login_without_tls``)."""

    scheme: str
    host: str
    port: int
    username: str | None = None
    password: str | None = field(default=None, repr=False)
    login_without_tls: bool = False

    @property
    def start_tls(self) -> bool | None:
        """aiosmtplib's ``start_tls``: False for ``smtps`` (TLS already),
        True where STARTTLS is required, None for "when offered"."""
        if self.scheme == "smtps":
            return False
        return True if self.username is not None and not self.login_without_tls else None

    @property
    def shown(self) -> str:
        """The only form of the URL ever printed: no user, no password."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{self.scheme}://{host}:{self.port}"


def smtp_target(url: str, *, login_without_tls: bool = False) -> SmtpTarget:
    """Parse ``notify.smtp_url``; a ``ValueError`` names what is wrong
    and never the password. ``login_without_tls`` is
    ``notify.smtp_login_without_tls``."""
    parts = urlsplit(url.strip())
    if parts.scheme not in DEFAULT_PORTS:
        raise ValueError("must start with smtp:// or smtps://")
    try:
        port = parts.port
    except ValueError:
        raise ValueError("has a port that is not a number from 1 to 65535") from None
    if not parts.hostname:
        raise ValueError("names no host: write smtp://[USER:PASSWORD@]HOST[:PORT]")
    if parts.path not in ("", "/") or parts.query or parts.fragment:
        raise ValueError("must be smtp[s]://[USER:PASSWORD@]HOST[:PORT], with no path or query")
    if parts.password is not None and not parts.username:
        raise ValueError("has a password but no user name")
    return SmtpTarget(
        parts.scheme,
        parts.hostname,
        port or DEFAULT_PORTS[parts.scheme],
        unquote(parts.username) if parts.username else None,
        unquote(parts.password) if parts.password is not None else None,
        login_without_tls,
    )


@dataclass(frozen=True, slots=True)
class Sent:
    """What one attempt got: ``error`` when it failed, ``temporary`` when
    another try could succeed (no answer, a timeout, a 4xx reply)."""

    error: str | None = None
    temporary: bool = False
    elapsed: float = 0.0

    @property
    def ok(self) -> bool:
        return self.error is None


async def send(target: SmtpTarget, msg: EmailMessage, timeout: float) -> Sent:
    """Hand ``msg`` to the mail server once; never raises for a network or
    SMTP failure. ``timeout`` bounds the whole attempt, however slowly the
    server answers."""
    import aiosmtplib

    started = time.monotonic()
    try:
        async with asyncio.timeout(timeout):
            await aiosmtplib.send(
                msg,
                hostname=target.host,
                port=target.port,
                username=target.username,
                password=target.password,
                use_tls=target.scheme == "smtps",
                start_tls=target.start_tls,
                timeout=timeout,  # certificates checked against the default context's CAs (SSL_CERT_FILE)
            )
    except (aiosmtplib.SMTPException, TimeoutError, OSError) as err:
        error, temporary = _describe(err, timeout)
        return Sent(error, temporary, time.monotonic() - started)
    return Sent(elapsed=time.monotonic() - started)


def _describe(err: Exception, timeout: float) -> tuple[str, bool]:
    import aiosmtplib

    tls = _tls_error(err)
    if isinstance(tls, ssl.SSLCertVerificationError):
        # Final: another try meets the same certificate, and plain text is no fallback.
        return f"the server's certificate is not trusted ({tls.verify_message})", False
    if tls is not None:
        return f"TLS failed ({tls.reason or type(tls).__name__})", False
    if isinstance(err, aiosmtplib.SMTPException) and "STARTTLS extension not supported" in str(err):
        return "the server offers no STARTTLS, and askd sends a password only over TLS (see notify.smtp_login_without_tls)", False
    if isinstance(err, (TimeoutError, aiosmtplib.SMTPTimeoutError)):
        return f"no answer within {timeout:g} s", True
    if isinstance(err, aiosmtplib.SMTPRecipientsRefused):
        codes = [r.code for r in err.recipients]
        return f"the recipient was refused ({', '.join(str(c) for c in codes)})", all(400 <= c < 500 for c in codes)
    if isinstance(err, aiosmtplib.SMTPResponseException):
        return f"the server answered {err.code} {err.message}", 400 <= err.code < 500
    if isinstance(err, (aiosmtplib.SMTPConnectError, aiosmtplib.SMTPServerDisconnected, OSError)):
        return f"cannot connect ({type(err).__name__})", True
    return f"the mail could not be sent ({type(err).__name__})", False


def _tls_error(err: BaseException | None) -> ssl.SSLError | None:
    """The TLS failure behind ``err``: aiosmtplib wraps it in its own errors."""
    for _ in range(5):  # a short chain; never a loop
        if err is None or isinstance(err, ssl.SSLError):
            return err
        err = err.__cause__ or err.__context__
    return None
