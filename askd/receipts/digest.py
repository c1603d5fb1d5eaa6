"""``digest``: what a receipt says was decided, as a hash any language can
recompute: ``"sha256:" + hex(SHA-256(JCS(content)))``, JCS being RFC 8785
canonical JSON (the ``rfc8785`` package; never written by hand here)."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from typing import Any

import rfc8785

PREFIX = "sha256:"

# RFC 8785 is defined on I-JSON, and askd keeps two things it excludes
# exactly as they were sent. An integer beyond 2**53 is taken as the double
# it rounds to (what JSON.parse, and so a JavaScript verifier, reads); a lone
# surrogate escape ("\ud800": no Unicode character) as U+FFFD, the
# replacement character, as a UTF-8 encoder writes it.
_SAFE = 2**53 - 1
_SURROGATE = re.compile("[\ud800-\udfff]")  # in a str, only a lone one: pairs are decoded


def _as_ijson(value: Any) -> Any:
    if isinstance(value, str):
        return _SURROGATE.sub("\ufffd", value)
    if isinstance(value, bool) or value is None or isinstance(value, float):
        return value
    if isinstance(value, int):
        return value if -_SAFE <= value <= _SAFE else float(value)
    if isinstance(value, Mapping):
        return {_as_ijson(k): _as_ijson(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_as_ijson(v) for v in value]
    return value  # rfc8785 refuses what is not JSON


def canonical(content: Any) -> bytes:
    """The RFC 8785 form of ``content``."""
    try:
        return rfc8785.dumps(content)
    except (rfc8785.CanonicalizationError, UnicodeEncodeError):  # not I-JSON (a key sorts as UTF-16): the rare content above
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
