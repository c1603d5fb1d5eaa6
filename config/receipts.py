"""``[receipts]``: the key that signs receipts, and older keys still trusted."""

from __future__ import annotations

from pathlib import Path

from pydantic import Field

from askd.config.section import Section


class ReceiptsSettings(Section):
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
