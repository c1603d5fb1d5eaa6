"""Moved to :mod:`askd.protocol.codec`; this path stays for code not yet updated (issue 31)."""

from askd.protocol.codec import *  # noqa: F401,F403
from askd.protocol.codec import MAX_DEPTH, MAX_INT_DIGITS, NumberOutOfRange, TooDeep, dumps, loads, loads_bounded, not_json, too_deep  # noqa: F401
