"""The base of every settings section (``[auth]``, ``[limits]``...): an unknown
key in a section is an error, not ignored."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class Section(BaseModel):
    model_config = ConfigDict(extra="forbid")
