"""The ask's ``remind`` (protocol section 20): every ``everySeconds``, at most
``times`` times, the audience members with no open tab are notified again.
Strict like every wire model: JSON integers pass as seconds, booleans,
strings and numbers past a double's range do not (``loc`` names the key)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class Remind(BaseModel):
    """Reminders (section 20): those of the audience with no open tab are notified again."""

    model_config = ConfigDict(extra="forbid", strict=True)

    everySeconds: float = Field(ge=60, description="Seconds between reminders, from the ask; at least 60.")
    times: int = Field(ge=1, le=10, description="How many reminders at most (1 to 10).")
