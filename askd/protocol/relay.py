"""What an agent sends when it passes on a person's answer from its own
host (protocol section 5, "Answering for the person"): the ask's ``hostKey``
and the person it acts for. Shared by the daemon, the clients and the JS types."""

from __future__ import annotations

import hashlib
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

from askd.protocol.ids import Id

#: An ask's ``hostKey`` (protocol section 5, "Answering for the person"): a
#: secret the asking process makes, so that only it may pass on what the person
#: answered in its own host. askd keeps only its SHA-256 (``host_key_hash``).
HostKey = Annotated[str, Field(min_length=32, max_length=128, pattern=r"^[A-Za-z0-9_-]+$")]


def host_key_hash(key: str | None) -> str | None:
    """The SHA-256 of a ``hostKey`` as askd keeps and compares it (hex); None for none."""
    return None if key is None else hashlib.sha256(key.encode("ascii")).hexdigest()


class OnBehalf(BaseModel):
    """What an agent's answer, decline or approval names: the person it acts
    for (one of the question's audience), the channel the person used, and
    the ask's ``hostKey``: only the asking process's own host relays (protocol
    section 5). Only the MCP bridge does this today, for the person who
    answered in its host."""

    model_config = ConfigDict(extra="forbid", strict=True)

    answeredBy: Id
    via: Literal["mcp"] = "mcp"
    # The ask's own hostKey: without it (or with another) the relay is refused (403).
    hostKey: HostKey | None = None
