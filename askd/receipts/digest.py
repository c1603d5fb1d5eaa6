"""``digest``: what a receipt says was decided, as a hash any language can
recompute: ``"sha256:" + hex(SHA-256(JCS(content)))``, JCS being RFC 8785
canonical JSON (the ``rfc8785`` package, or ``orjson`` where its output is
the same bytes; never written by hand here)."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from typing import Any

import orjson
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


def _orjson_is_jcs(value: Any) -> bool:
    """Whether ``orjson``'s sorted-key output of ``value`` is its JCS, byte
    for byte: no float (JCS writes numbers as ECMAScript does, orjson as
    Python's repr), integers within I-JSON's range, keys in ASCII (JCS sorts
    keys by UTF-16 code units, orjson by code points: they agree there).
    Strings escape alike (``tests/receipts/test_canonical.py`` checks every
    character); a lone surrogate makes orjson refuse, and the caller falls back."""
    kind = type(value)
    if kind is str or kind is bool or value is None:
        return True
    if kind is int:
        return -_SAFE <= value <= _SAFE
    if kind is dict:
        return all(type(k) is str and k.isascii() and _orjson_is_jcs(v) for k, v in value.items())
    if kind is list or kind is tuple:
        return all(_orjson_is_jcs(v) for v in value)
    return False


def canonical(content: Any) -> bytes:
    """The RFC 8785 form of ``content``. rfc8785 is pure Python (about 27 us
    for an audit record, docs/performance.md); what orjson renders the same
    (nearly everything askd hashes: records, most questions and answers) it
    renders in a hundredth of that."""
    if _orjson_is_jcs(content):
        try:
            return orjson.dumps(content, option=orjson.OPT_SORT_KEYS)
        except orjson.JSONEncodeError:  # a lone surrogate: below
            pass
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
