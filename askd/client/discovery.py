"""Finding the daemon and a token without flags (protocol section 7).

URLs: the explicit value, else the environment (``ASKD_URL``,
``ASKD_ADMIN_URL``), else the scheme and ports ``askd serve`` wrote into
``<state dir>/askd.json``, else the configured host, port and TLS (default
http://127.0.0.1:8765 and :8766). A CA bundle to trust besides the
system's: the explicit value, else ``ASKD_CA_FILE``. Tokens: the explicit
value, else the environment (``ASKD_AGENT_TOKEN``, ``ASKD_ADMIN_TOKEN``),
else short-lived tokens minted from the secret the daemon uses (configured,
else the state directory's).
The CLI and the library share this so both find the same daemon.
"""

from __future__ import annotations

import os
import ssl
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from askd import state
from askd.client.errors import AskdClientError

if TYPE_CHECKING:
    from askd import tokens
    from askd.config import Settings

# The daemon's settings (askd.config, which brings the mail and settings
# code) are imported only when a URL, a secret or a CA bundle must come from
# them: a client given its URL and token never loads them. The token code
# (askd.tokens, which brings PyJWT) is imported only to mint a token.

TokenSource = str | Callable[[], str]

# Lifetime of tokens the client mints for itself; re-minted before expiry.
MINTED_TTL_SECONDS = 300.0


class NoToken(AskdClientError):
    """No token was given and no secret was found to mint one."""


class Minter:
    """A callable token source: mints a short-lived token from the secret
    and mints a new one shortly before it expires."""

    def __init__(self, secret: str, role: tokens.Role, sub: str | None = None, ttl: float = MINTED_TTL_SECONDS) -> None:
        self._secret, self._role, self._sub, self._ttl = secret, role, sub, ttl
        self._token, self._renew_at = "", 0.0

    def __call__(self) -> str:
        now = time.time()
        if now >= self._renew_at:
            from askd import tokens

            self._token = tokens.issue(self._secret, self._role, self._sub, self._ttl)
            self._renew_at = now + self._ttl / 2
        return self._token


def resolve_token(source: TokenSource) -> str:
    return source() if callable(source) else source


def connect_host(host: str) -> str:
    """Where to connect to reach a daemon bound to ``host``."""
    if host in ("", "0.0.0.0"):
        return "127.0.0.1"
    if host == "::":
        return "[::1]"
    return f"[{host}]" if ":" in host and not host.startswith("[") else host


def _alive(pid: Any) -> bool:
    if not isinstance(pid, int) or pid <= 0:
        return True  # cannot tell: trust the file
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class Discovery:
    """Where the daemon is and how to authenticate, from flags, environment,
    ``askd.json`` and configuration, in that order. Settings are loaded
    only when needed (a config error surfaces only if they are)."""

    def __init__(self, config: Path | str | None = None, settings: Settings | None = None) -> None:
        self._config = config
        self._settings = settings

    @property
    def settings(self) -> Settings:
        if self._settings is None:
            from askd.config import load_settings

            self._settings = load_settings(self._config)
        return self._settings

    def runtime(self) -> dict[str, Any] | None:
        """``askd.json`` of a daemon that still runs, else None (a daemon
        killed with SIGKILL leaves a stale file behind)."""
        info = state.read_runtime(self.settings.state_dir)
        if info is None or not _alive(info.get("pid")):
            return None
        return info

    def _url(self, explicit: str | None, env: str, port_key: str, host_key: str) -> str:
        value = explicit or os.environ.get(env)
        if value:
            return value.rstrip("/")
        info = self.runtime() or {}
        s = self.settings
        host = info.get(host_key) or getattr(s, host_key)
        port = info.get(port_key) or getattr(s, port_key)
        scheme = info.get("scheme") or ("https" if s.tls.enabled else "http")
        return f"{scheme}://{connect_host(str(host))}:{port}"

    def url(self, explicit: str | None = None) -> str:
        """The public listener (agent API and ``/ws``)."""
        return self._url(explicit, "ASKD_URL", "port", "host")

    def admin_url(self, explicit: str | None = None) -> str:
        return self._url(explicit, "ASKD_ADMIN_URL", "admin_port", "admin_host")

    def page_url(self, explicit: str | None = None) -> str:
        """Where people open the inbox: ``explicit``, else ``public_url``
        (configured, else the running daemon's), else the public listener."""
        if explicit:
            return explicit.rstrip("/")
        configured = self.settings.public_base()
        if configured:
            return configured
        running = (self.runtime() or {}).get("public_url")
        if isinstance(running, str) and running.startswith(("http://", "https://")):
            return running.rstrip("/")
        return self.url()

    def ca_file(self, explicit: str | Path | None = None) -> str | None:
        return str(explicit) if explicit else os.environ.get("ASKD_CA_FILE") or None

    def tls(self, url: str, ca_file: str | Path | None = None) -> ssl.SSLContext | None:
        """What verifies ``url``'s certificate: ``tls_context`` with ``ca_file``, else ``ASKD_CA_FILE``."""
        return tls_context(url, self.ca_file(ca_file))

    def secret(self) -> str | None:
        s = self.settings
        if s.auth.secret is not None:
            return s.auth.secret.get_secret_value()
        return state.read_secret(s.state_dir)

    def _token(self, explicit: str | None, env: str | None, role: tokens.Role, sub: str | None = None) -> TokenSource:
        value = explicit or (os.environ.get(env) if env else None)
        if value:
            return value
        secret = self.secret()
        if secret is None:
            where = f" or {env}" if env else ""
            raise NoToken(
                f"no {role} token: pass --token{where}, or run askd serve on this machine "
                f"(no secret in the configuration or in {self.settings.state_dir})"
            )
        return Minter(secret, role, sub)

    def agent_token(self, explicit: str | None = None) -> TokenSource:
        return self._token(explicit, "ASKD_AGENT_TOKEN", "agent")

    def admin_token(self, explicit: str | None = None) -> TokenSource:
        return self._token(explicit, "ASKD_ADMIN_TOKEN", "admin")

    def user_token(self, user_id: str, explicit: str | None = None) -> TokenSource:
        return self._token(explicit, None, "user", user_id)


def tls_context(url: str, ca_file: str | Path | None) -> ssl.SSLContext | None:
    """For an ``https``/``wss`` URL: the system's CAs plus ``ca_file``;
    None for plain HTTP (nothing to verify)."""
    if not url.startswith(("https://", "wss://")):
        return None
    ctx = ssl.create_default_context()
    if ca_file:
        try:
            ctx.load_verify_locations(cafile=str(ca_file))
        except (OSError, ssl.SSLError) as err:
            from askd.config import ConfigError

            reason = getattr(err, "reason", None) or err.strerror or str(err)
            raise ConfigError(f"cannot use the CA bundle {ca_file} (--cacert, ASKD_CA_FILE): {reason}") from None
    return ctx


def cert_error(err: BaseException) -> ssl.SSLCertVerificationError | None:
    """The certificate verification failure behind a transport error, if any."""
    seen: BaseException | None = err
    for _ in range(8):  # httpx -> httpcore -> ssl: a short chain
        if seen is None:
            return None
        if isinstance(seen, ssl.SSLCertVerificationError):
            return seen
        seen = seen.__cause__ or seen.__context__
    return None


def ws_url(base: str) -> str:
    """``http://h:p`` -> ``ws://h:p/ws``; a ``ws://`` URL is kept as it is."""
    base = base.rstrip("/")
    if base.startswith(("ws://", "wss://")):
        return base
    if base.startswith("https://"):
        return "wss://" + base[len("https://") :] + "/ws"
    if base.startswith("http://"):
        return "ws://" + base[len("http://") :] + "/ws"
    return f"ws://{base}/ws"
