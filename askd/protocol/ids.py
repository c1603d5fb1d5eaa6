"""What names things on the wire: session and question ids, frame ids, and
subscribe's wildcard."""

from __future__ import annotations

from typing import Annotated, Union

from pydantic import AfterValidator, Field, StrictInt, StrictStr

from askd.protocol.visible import NAME_PATTERN, refuse_hidden

# Ids name sessions, questions, users and groups in URLs and frames:
# bounded, and nothing in them that does not show (no control,
# bidirectional or zero-width character: protocol section 4), so two ids
# that look alike are alike. The pattern says so in the schema; the
# validator says which character, at which place.
Id = Annotated[
    StrictStr,
    Field(min_length=1, max_length=256, json_schema_extra={"pattern": NAME_PATTERN}),
    AfterValidator(refuse_hidden),
]
NonEmpty = Annotated[StrictStr, Field(min_length=1)]

# An option's label is what a person picks and what the answer gives back:
# nothing in it unseen either, so "Yes" and "Yes\u200b" never stand side by
# side looking alike (protocol section 4).
Label = Annotated[NonEmpty, Field(json_schema_extra={"pattern": NAME_PATTERN}), AfterValidator(refuse_hidden)]

#: A client frame's ``id``, echoed in the reply (``ack``, ``error``, ...).
FrameId = Union[StrictStr, StrictInt, None]

#: subscribe's wildcard: every session of the connection's user. Never a session id.
ALL_SESSIONS = "*"
