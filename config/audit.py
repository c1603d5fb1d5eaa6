"""``[audit]``: how long the audit trail keeps its records (protocol section 19)."""

from __future__ import annotations

from pydantic import Field

from askd.config.section import Section


class AuditSettings(Section):
    """The audit trail keeps every question's life, hash-chained."""

    retention_days: float = Field(
        default=365,
        ge=0,
        description=(
            "Days an audit record is kept; older ones are removed from the front of the chain, "
            "which still verifies (0: keep all). Checked hourly."
        ),
    )
