"""``[log]``: the log's format and level."""

from __future__ import annotations

import sys
from typing import Any, Literal

from pydantic import Field, field_validator

from askd.config.section import Section


class LogSettings(Section):
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
