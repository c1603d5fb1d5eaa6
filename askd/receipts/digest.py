"""``digest``: what a receipt says was decided, as a hash any language can
recompute: ``"sha256:" + hex(SHA-256(JCS(content)))``, JCS being RFC 8785
canonical JSON (the ``rfc8785`` package; never written by hand here)."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any

import rfc8785

PREFIX = "sha256:"

# RFC 8785 numbers are IEEE 754 doubles (I-JSON). askd keeps an integer
# beyond 2**53 exact as it was sent; JCS takes it as the double it rounds
# to, which is what JSON.parse, and so a JavaScript verifier, reads.
_SAFE = 2**53 - 1


def _as_ijson(value: Any) -> Any:
    if isinstance(value, bool) or value is None or isinstance(value, (str, float)):
        return value
    if isinstance(value, int):
        return value if -_SAFE <= value <= _SAFE else float(value)
    if isinstance(value, Mapping):
        return {k: _as_ijson(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_as_ijson(v) for v in value]
    return value  # rfc8785 refuses what is not JSON


def canonical(content: Any) -> bytes:
    """The RFC 8785 form of ``content``."""
    try:
        return rfc8785.dumps(content)
    except rfc8785.IntegerDomainError:
        return rfc8785.dumps(_as_ijson(content))


def digest(content: Any) -> str:
    """``sha256:<hex>`` of the canonical JSON of ``content``."""
    return PREFIX + hashlib.sha256(canonical(content)).hexdigest()


def questions_content(questions: list[Any], answers: Any) -> dict[str, Any]:
    """What a question's receipt covers: the questions as asked (as listings
    and the pushed event show them), and the answers (None: there are none)."""
    return {"questions": questions, "answers": answers}


def approval_content(action: Mapping[str, Any], scope: Any) -> dict[str, Any]:
    """What an approval's receipt covers: the action (its final arguments)
    and the scope granted (None: not approved)."""
    return {"action": {"name": action["name"], "arguments": action["arguments"]}, "scope": scope}
