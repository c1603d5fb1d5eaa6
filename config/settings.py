"""askd's one settings model (protocol section 8).

Sources, highest first: command-line flags (passed as init values), the
environment (``ASKD_`` prefix, ``__`` between nested names), the TOML file
(``--config`` or ``ASKD_CONFIG``), then the defaults written here.
"""

from __future__ import annotations

import ipaddress
import os
import tomllib
from contextvars import ContextVar
from pathlib import Path
from typing import Any, Literal

import platformdirs
from pydantic import AnyHttpUrl, Field, IPvAnyNetwork, ValidationError, field_validator
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    TomlConfigSettingsSource,
)

# Each section lives in its own module, named for its key; Settings composes
# them and they are re-exported here, where they were defined before.
from askd.config.audit import AuditSettings
from askd.config.auth import AuthSettings
from askd.config.environment import ConfigError, EnvSource, check_environment, env_name  # env_name: for packaging/gen_config.py
from askd.config.errors import described
from askd.config.limits import LimitsSettings
from askd.config.log import LogSettings
from askd.config.notify import NotifySettings
from askd.config.receipts import ReceiptsSettings
from askd.config.tls import TlsSettings
from askd.config.ws import WebSocketSettings

__all__ = [
    "AuthSettings",
    "ConfigError",
    "LimitsSettings",
    "LogSettings",
    "NotifySettings",
    "ReceiptsSettings",
    "Settings",
    "TlsSettings",
    "WebSocketSettings",
    "env_name",
    "load_settings",
]

_toml_file: ContextVar[Path | None] = ContextVar("askd_toml_file", default=None)


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
    audit: AuditSettings = Field(default_factory=AuditSettings)

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
