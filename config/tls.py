"""``[tls]``: the certificate and key both listeners serve HTTPS (and WSS) with."""

from __future__ import annotations

from pathlib import Path

from pydantic import ConfigDict, Field, ValidationInfo, field_validator

from askd.config.section import Section


class TlsSettings(Section):
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
