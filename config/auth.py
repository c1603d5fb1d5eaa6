"""``[auth]``: the secret that signs tokens, and the revocation time."""

from __future__ import annotations

from pydantic import Field, SecretStr, field_validator

from askd.config.section import Section


class AuthSettings(Section):
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
