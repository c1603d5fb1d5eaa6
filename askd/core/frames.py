"""Moved to :mod:`askd.protocol.frames`; this path stays for code not yet updated (issue 31)."""

from askd.protocol.frames import *  # noqa: F401,F403
from askd.protocol.frames import (  # noqa: F401
    FRAME_TYPES,
    AnswerFrame,
    DeclineFrame,
    ExtendFrame,
    Frame,
    FrameError,
    FrameId,
    Ping,
    Subscribe,
    Unsubscribe,
    parse_frame,
    validation_details,
)
