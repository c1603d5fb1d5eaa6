"""What names things on the wire: session and question ids, frame ids, and
subscribe's wildcard."""

from __future__ import annotations

from typing import Annotated, Union

from pydantic import Field, StrictInt, StrictStr

# Ids name sessions in URLs and frames: printable, bounded.
Id = Annotated[StrictStr, Field(min_length=1, max_length=256, pattern=r"^[^\x00-\x1f\x7f]+$")]
NonEmpty = Annotated[StrictStr, Field(min_length=1)]

#: A client frame's ``id``, echoed in the reply (``ack``, ``error``, ...).
FrameId = Union[StrictStr, StrictInt, None]

#: subscribe's wildcard: every session of the connection's user. Never a session id.
ALL_SESSIONS = "*"
