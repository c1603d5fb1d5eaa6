"""askd's one settings model (spec section 8).

Sources, highest first: command-line flags (passed as init values), the
environment (``ASKD_`` prefix, ``__`` between nested names), the TOML file
(``--config`` or ``ASKD_CONFIG``), then the defaults written here.
"""

from __future__ import annotations

import ipaddress
import os
import sys
import tomllib
from contextvars import ContextVar
from pathlib import Path
from typing import Any, Literal

import platformdirs
from pydantic import (
    AnyHttpUrl,
    BaseModel,
    ConfigDict,
    Field,
    IPvAnyNetwork,
    SecretStr,
    ValidationError,
    ValidationInfo,
    field_validator,
)
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    TomlConfigSettingsSource,
)

from askd.addresses import Sender
from askd.config.environment import ConfigError, EnvSource, check_environment, env_name  # env_name: for packaging/gen_config.py
from askd.config.errors import described
from askd.channels.mail import SmtpTarget, smtp_target

_toml_file: ContextVar[Path | None] = ContextVar("askd_toml_file", default=None)


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid")


class AuthSettings(_Section):
    secret: SecretStr | None = Field(
        default=None,
        description="HS256 secret that signs tokens; generated into the state directory when unset.",
    )

    @field_validator("secret")
    @classmethod
    def _long_enough(cls, v: SecretStr | None) -> SecretStr | None:
        if v is not None and len(v.get_secret_value()) < 32:
            raise ValueError("must be at least 32 characters (HS256 wants a 256-bit key)")
        return v

    not_before: float = Field(
        0.0,
        ge=0,
        description=(
            "Seconds since the epoch: tokens issued earlier (or without iat) are refused, and sockets that used one "
            "are closed with 4001. `askd token revoke-all` moves it to now on every node."
        ),
    )


class LimitsSettings(_Section):
    max_message_bytes: int = Field(65536, ge=256, le=16 * 1024 * 1024, description="Largest WebSocket frame accepted; larger closes with 1009.")
    max_request_bytes: int = Field(65536, ge=1024, le=16 * 1024 * 1024, description="Largest HTTP request body accepted; larger gets 413.")
    max_questions: int = Field(20, ge=1, le=1000, description="Most questions in one ask.")
    max_pending_per_session: int = Field(100, ge=1, description="Most pending questions in one session (429 beyond).")
    max_pending_total: int = Field(100_000, ge=1, description="Most pending questions in the daemon (429 beyond).")
    max_wait_seconds: float = Field(300.0, gt=0, description="Longest ?wait= long-poll; longer waits are shortened to it.")
    max_connections_per_user: int = Field(64, ge=1, description="Most open WebSocket connections per user; more are refused with 1008.")
    max_buffered_bytes: int = Field(4 * 1024 * 1024, ge=65536, description="Outgoing bytes a slow WebSocket peer may leave unread before it is dropped.")
    frames_per_second: float = Field(50.0, gt=0, description="Sustained client frames per second per connection.")
    frames_burst: int = Field(200, ge=1, description="Client frames allowed in a burst above the sustained rate.")
    body_timeout_seconds: float = Field(30.0, gt=0, description="A request body must arrive whole within this; else the connection ends.")
    idle_timeout_seconds: float = Field(
        60.0, gt=0, description="An HTTP connection with no request (or no complete headers) for this long is closed."
    )
    header_timeout_seconds: float = Field(
        10.0,
        gt=0,
        description=(
            "A connection none of whose requests has carried a valid token must send each request's headers within "
            "this (from accept, or from its last answer); else it is closed."
        ),
    )
    max_connections: int = Field(
        20_000,
        ge=1,
        description=(
            "Most open connections to the public listener. Those without a valid token yet may hold half; past that, "
            "a new connection closes the oldest of them."
        ),
    )
    max_admin_connections: int = Field(
        1000, ge=1, description="Most open connections to the admin listener, a pool of its own (as max_connections)."
    )
    max_connections_per_address: int = Field(
        1000,
        ge=0,
        description=(
            "Most open connections from one TCP peer address, per listener; 0: no cap. trusted_proxies are exempt "
            "(each carries many clients); raise it for a NAT or a proxy not listed there."
        ),
    )
    max_subscriptions_per_connection: int = Field(
        256, ge=1, description="Most sessions one WebSocket may subscribe to; more get error too_many_subscriptions."
    )
    max_pending_bytes_per_user: int = Field(
        16 * 1024 * 1024, ge=65536, description="Most bytes of pending questions for one user (429 too_many_pending beyond)."
    )
    # Per agent token sub (tokens without one count as one agent) and in all: docs/security.md.
    max_pending_per_agent: int = Field(
        10_000, ge=1, description="Most pending questions one agent (token sub) may hold (429 too_many_pending beyond)."
    )
    max_pending_bytes_per_agent: int = Field(
        64 * 1024 * 1024, ge=65536, description="Most bytes of pending questions one agent (token sub) may hold (429 beyond)."
    )
    max_user_share_per_agent: float = Field(
        0.5, gt=0, le=1, description="Share of each user's max_pending_bytes_per_user one agent may fill (429 beyond)."
    )
    max_pending_bytes_total: int = Field(
        512 * 1024 * 1024, ge=65536, description="Most bytes of pending questions in the daemon (429 too_many_pending beyond)."
    )


class WebSocketSettings(_Section):
    ping_interval_seconds: float = Field(20.0, gt=0, description="How often the daemon pings each WebSocket peer.")
    ping_timeout_seconds: float = Field(30.0, gt=0, description="A peer that answers no ping for this long is dropped.")


class LogSettings(_Section):
    format: Literal["json", "console"] | None = Field(default=None, description="console on a terminal, else json.")
    level: Literal["debug", "info", "warning", "error", "critical"] = Field("info", description="Least severe log level written.")

    @field_validator("level", mode="before")
    @classmethod
    def _lower(cls, v: Any) -> Any:
        return v.lower() if isinstance(v, str) else v

    def resolved_format(self) -> str:
        if self.format:
            return self.format
        return "console" if sys.stderr.isatty() else "json"


class NotifySettings(_Section):
    """Webhooks and e-mail for people away from every tab (spec E, J)."""

    webhook_url: AnyHttpUrl | None = Field(default=None, description="URL each new question is POSTed to; unset: no webhooks.")
    format: Literal["json", "slack"] = Field("json", description="Body: json (askd's event), or slack (a Block Kit message with answer buttons, for chat incoming webhooks).")
    webhook_secret: SecretStr | None = Field(
        default=None, description="Signs each delivery per Standard Webhooks (webhook-signature over its id, timestamp and body; whsec_ + base64 of it); unset: no signature."
    )
    after_seconds: float = Field(0.0, ge=0, description="Send only if the question is still pending this many seconds after its creation.")
    only_offline: bool = Field(False, description="Send only if the user has no open connection at that moment.")
    timeout_seconds: float = Field(
        10.0, gt=0, le=300, description="How long one delivery attempt (a webhook POST, or one mail) may take before it counts as failed."
    )
    # A secret: the URL may hold the mail server's password, so it is never
    # shown (repr, logs, askd notify test print askd.channels.mail.SmtpTarget.shown).
    smtp_url: SecretStr | None = Field(
        default=None,
        description=(
            "Mail server for e-mail notifications: smtp://[USER:PASSWORD@]HOST[:PORT] (STARTTLS when the server "
            "offers it; required with a password) or smtps://... (TLS from the start); unset: no e-mail."
        ),
    )
    smtp_login_without_tls: bool = Field(
        False,
        description=(
            "Send smtp_url's user and password even to a server that offers no STARTTLS (in plain text: "
            "only on a network you trust). Off: such a mail fails."
        ),
    )
    email_from: Sender | None = Field(
        default=None,
        validate_default=True,  # checked unset too: smtp_url needs it
        description="The From of askd's mails, e.g. \"askd <askd@example.com>\"; needed with smtp_url.",
    )

    @field_validator("webhook_secret")
    @classmethod
    def _not_empty(cls, v: SecretStr | None) -> SecretStr | None:
        if v is not None and not v.get_secret_value():
            raise ValueError("must not be empty (leave it unset for no signature)")
        return v

    @field_validator("smtp_url")
    @classmethod
    def _an_smtp_url(cls, v: SecretStr | None) -> SecretStr | None:
        if v is not None:
            smtp_target(v.get_secret_value())  # ValueError, naming no password
        return v

    def mail_server(self) -> SmtpTarget | None:
        """The mail server of ``smtp_url`` with its TLS rule; None: no e-mail."""
        if self.smtp_url is None:
            return None
        return smtp_target(self.smtp_url.get_secret_value(), login_without_tls=self.smtp_login_without_tls)

    @field_validator("email_from")
    @classmethod
    def _from_with_smtp(cls, v: Sender | None, info: ValidationInfo) -> Sender | None:
        if v is None and info.data.get("smtp_url") is not None:
            raise ValueError("is not set but notify.smtp_url (ASKD_NOTIFY__SMTP_URL) is: a mail needs a From address")
        return v

class TlsSettings(_Section):
    # Checked on every load, even unset, so that half a pair is an error.
    model_config = ConfigDict(extra="forbid", validate_default=True)

    cert_file: Path | None = Field(
        default=None,
        description="PEM certificate (chain) file; with key_file, both listeners serve HTTPS and /ws is WSS. Unset: plain HTTP.",
    )
    key_file: Path | None = Field(default=None, description="PEM private key file of cert_file.")

    @field_validator("key_file")
    @classmethod
    def _both_or_neither(cls, v: Path | None, info: ValidationInfo) -> Path | None:
        cert = info.data.get("cert_file")
        if v is not None and cert is None:
            raise ValueError("is set but tls.cert_file (ASKD_TLS__CERT_FILE) is not: set both or neither")
        if v is None and cert is not None:
            raise ValueError("is not set but tls.cert_file (ASKD_TLS__CERT_FILE) is: set both or neither")
        return v

    @property
    def enabled(self) -> bool:
        return self.cert_file is not None


class ReceiptsSettings(_Section):
    """The key that signs receipts (protocol section 16). The files are read
    when the daemon starts (a client loading the same settings never reads them)."""

    key_file: Path | None = Field(
        default=None,
        description=(
            "Ed25519 private key (PEM, unencrypted) that signs receipts. Unset: a key derived from auth.secret "
            "(every node with the same secret signs alike)."
        ),
    )
    previous_key_files: list[Path] = Field(
        default_factory=list,
        description="Older keys (PEM files, private or public) whose receipts must still verify: their public keys stay in the published JWKS.",
    )


class Settings(BaseSettings):
    model_config = SettingsConfigDict(
        env_prefix="ASKD_",
        env_nested_delimiter="__",
        extra="forbid",
        validate_default=True,
    )

    host: str = Field("127.0.0.1", min_length=1, description="Public listener address (WebSocket, agent API, web page).")
    port: int = Field(8765, ge=0, le=65535, description="Public listener port; 0 picks a free one.")
    admin_host: str = Field("127.0.0.1", min_length=1, description="Admin listener address (admin API, /metrics).")
    admin_port: int = Field(8766, ge=0, le=65535, description="Admin listener port; 0 picks a free one.")
    question_timeout_seconds: float = Field(900.0, gt=0, description="Default time a question waits, from its creation.")
    max_timeout_seconds: float = Field(86400.0, gt=0, description="Longest timeoutSeconds an ask may request.")
    result_ttl_seconds: float = Field(600.0, ge=0, description="How long a result is kept after its question ends.")
    state_dir: Path = Field(
        default_factory=lambda: Path(platformdirs.user_state_dir("askd")),
        description="Holds the generated secret and askd.json (the bound ports).",
    )
    allowed_origins: list[str] = Field(default_factory=list, description="Extra Origins allowed to open /ws (the daemon's own is always allowed).")
    allowed_hosts: list[str] = Field(
        default_factory=list,
        description=(
            "Extra host names a request's Host may carry (the listen address, localhost, 127.0.0.1, [::1] and "
            "public_url's host always may); others get 403, against DNS rebinding."
        ),
    )
    public_url: AnyHttpUrl | None = Field(
        default=None,
        description=(
            "The URL people and browsers use to reach the public listener, e.g. through a proxy "
            "(https://tools.example.com/askd/). Links askd prints or sends start with it, and its "
            "origin may open /ws. Unset: the public listener's own URL."
        ),
    )
    trusted_proxies: list[IPvAnyNetwork] = Field(
        default_factory=list,
        description=(
            "Addresses or CIDR networks of the reverse proxies askd believes about the client's address, "
            "scheme and host (X-Forwarded-For or X-Real-IP, X-Forwarded-Proto, X-Forwarded-Host). "
            "Those headers from any other peer are ignored."
        ),
    )
    loop: Literal["asyncio", "uvloop"] = Field(
        "asyncio", description="Event loop: asyncio, or uvloop (about 9 % less CPU per round trip; needs askd[uvloop])."
    )
    store: str = Field(
        "sqlite",
        description=(
            "Where state is kept: sqlite (<state dir>/askd.db), sqlite:///ABSOLUTE/PATH.db, "
            "memory (nothing survives the process), or redis://HOST:PORT/DB (shared by several daemons)."
        ),
    )
    node_id: str | None = Field(
        default=None,
        min_length=1,
        max_length=64,
        pattern=r"^[A-Za-z0-9._-]+$",
        description="This daemon's id in /healthz, askd.json and logs; generated at each start when unset.",
    )
    node_ttl_seconds: float = Field(
        30.0,
        ge=1,
        le=3600,
        description="With a shared store: a node silent this long (killed) leaves the connection listings; it beats every third of it.",
    )
    auth: AuthSettings = Field(default_factory=AuthSettings)
    tls: TlsSettings = Field(default_factory=TlsSettings)
    limits: LimitsSettings = Field(default_factory=LimitsSettings)
    ws: WebSocketSettings = Field(default_factory=WebSocketSettings)
    log: LogSettings = Field(default_factory=LogSettings)
    notify: NotifySettings = Field(default_factory=NotifySettings)
    receipts: ReceiptsSettings = Field(default_factory=ReceiptsSettings)

    @field_validator("store")
    @classmethod
    def _store_url(cls, v: str) -> str:
        if v in ("sqlite", "memory"):
            return v
        if v.startswith("sqlite:///"):
            if not Path(v[len("sqlite://") :]).is_absolute() or v.endswith("/"):
                raise ValueError("sqlite:///PATH needs an absolute file path, e.g. sqlite:///var/lib/askd/askd.db")
            return v
        if v.startswith(("redis://", "rediss://")):
            return v
        raise ValueError("must be sqlite, sqlite:///ABSOLUTE/PATH.db, memory, or redis://HOST:PORT/DB")

    @field_validator("max_timeout_seconds")
    @classmethod
    def _max_covers_default(cls, v: float, info: Any) -> float:
        default = info.data.get("question_timeout_seconds")
        if default is not None and v < default:
            raise ValueError("must be at least question_timeout_seconds")
        return v

    @field_validator("public_url")
    @classmethod
    def _a_base_url(cls, v: AnyHttpUrl | None) -> AnyHttpUrl | None:
        # askd appends "?token=..." and paths to it.
        if v is not None and (v.query or v.fragment or v.username or v.password):
            raise ValueError("must be a plain base URL: no query, fragment or user:password")
        return v

    @field_validator("trusted_proxies", mode="before")
    @classmethod
    def _networks(cls, v: Any) -> Any:
        # strict=False: "10.1.2.3/8" means 10.0.0.0/8, as nginx's set_real_ip_from reads it.
        if not isinstance(v, list):
            return v
        out = []
        for item in v:
            try:
                out.append(ipaddress.ip_network(item, strict=False) if isinstance(item, str) else item)
            except ValueError:
                raise ValueError(f"{item!r} is not an IP address or CIDR network") from None
        return out

    def public_base(self) -> str | None:
        """``public_url`` without its trailing slash, or None."""
        return str(self.public_url).rstrip("/") if self.public_url is not None else None

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        sources: list[PydanticBaseSettingsSource] = [init_settings, EnvSource(settings_cls)]
        toml = _toml_file.get()
        if toml is not None:
            sources.append(TomlConfigSettingsSource(settings_cls, toml_file=toml))
        return tuple(sources)


def load_settings(config_file: Path | str | None = None, **flags: Any) -> Settings:
    """Build the settings; ``flags`` are the command line's values (None = not given)."""
    path = config_file or os.environ.get("ASKD_CONFIG") or None
    toml: Path | None = None
    if path:
        toml = Path(path).expanduser()
        if not toml.is_file():
            raise ConfigError(f"config file {toml} does not exist")
    overrides = _nest({k: v for k, v in flags.items() if v is not None})
    check_environment(Settings)
    token = _toml_file.set(toml)
    try:
        return Settings(**overrides)
    except ValidationError as err:
        errors = err.errors()
        # An unknown key first: a misspelt name is why its setting seems unset.
        first = next((e for e in errors if e["type"] == "extra_forbidden"), errors[0])
        raise described(Settings, first, overrides, toml) from None
    except tomllib.TOMLDecodeError as err:
        raise ConfigError(f"config file {toml} is not valid TOML: {err}") from None
    except ValueError as err:  # an environment value that is not JSON, and the like
        raise ConfigError(f"cannot read configuration: {err}") from None
    finally:
        _toml_file.reset(token)


def _nest(flat: dict[str, Any]) -> dict[str, Any]:
    """``{"log__level": x}`` -> ``{"log": {"level": x}}``, for flags of nested settings."""
    out: dict[str, Any] = {}
    for key, value in flat.items():
        parts = key.split("__")
        node = out
        for part in parts[:-1]:
            node = node.setdefault(part, {})
        node[parts[-1]] = value
    return out
