"""Moved to :mod:`askd.protocol.schema`; this path stays for code not yet updated (issue 31)."""

from askd.protocol.schema import MODELS, protocol_schema  # noqa: F401
