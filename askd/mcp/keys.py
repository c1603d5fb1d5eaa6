"""Idempotency-Keys made from the MCP request, so a host that retries a
call never asks twice.

A retry is a ``tools/call`` of ``ask_user_questions`` with the same
arguments: the host re-sent it, or gave up on the first (its own timeout)
and called again. The key is a digest of the tool and its arguments, so the
retry re-attaches to the question that is already open. Once a call has
delivered that question's end (answered, timed out, cancelled, or withdrawn
by a host cancel), the same arguments are a new question: the key gets the
next round, so a model asking "Proceed?" twice in a session never gets the
first answer again. A per-process nonce keeps a restarted bridge (same
``--session``, rounds back at 0) from replaying a result of the one before.
"""

from __future__ import annotations

import hashlib
import json
import secrets
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class AskKey:
    digest: str
    round: int

    def header(self, nonce: str) -> str:
        return f"mcp-{nonce}-{self.digest}-{self.round}"


class AskKeys:
    def __init__(self) -> None:
        self.nonce = secrets.token_hex(8)
        self._round: dict[str, int] = {}  # digest -> the round a new call uses
        self._of_request: dict[str, AskKey] = {}  # requestId -> the key it was asked with

    def for_call(self, tool: str, arguments: Mapping[str, Any]) -> AskKey:
        # Sorted keys, ASCII escapes: the same call must hash to the same key
        # in every version of the bridge, which the codec (key order kept,
        # UTF-8) would not give.
        canonical = json.dumps([tool, arguments], sort_keys=True, separators=(",", ":"))
        digest = hashlib.sha256(canonical.encode()).hexdigest()[:40]
        return AskKey(digest, self._round.get(digest, 0))

    def header(self, key: AskKey) -> str:
        return key.header(self.nonce)

    def asked(self, request_id: str, key: AskKey) -> None:
        self._of_request[request_id] = key

    def ended(self, request_id: str) -> None:
        """A call delivered the question's end: the same arguments ask anew."""
        key = self._of_request.pop(request_id, None)
        if key is not None:
            self._round[key.digest] = max(self._round.get(key.digest, 0), key.round + 1)
