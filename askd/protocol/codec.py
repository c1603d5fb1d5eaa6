"""JSON in and out of askd: orjson, with the standard library for the few
valid inputs orjson refuses.

orjson is several times faster than ``json`` on askd's hot path: every frame,
body and stored question passes here (docs/performance.md). It refuses some
valid JSON (integers beyond 64 bits, lone surrogate escapes such as
``"\\ud800"``); those go through ``json`` and come out as before (a lone
surrogate is sent escaped: it has no UTF-8 form). NaN and Infinity are not
JSON (RFC 8259) and a browser's ``JSON.parse`` rejects them: askd refuses
them as invalid JSON rather than store and push a frame no page can read.
What a peer sends (``loads_bounded``) must also keep its integers within
I-JSON's range (RFC 7493); what askd stored before it refused them still
reads (``loads``).
"""

from __future__ import annotations

import json
import math
from typing import Any

import orjson


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


# Python reads at most 4,300 digits into an int (sys.int_info); askd says so
# itself, and refuses a float literal past a double's range (1e999) as orjson
# does, rather than read it as infinity, which no JSON can carry back out.
MAX_INT_DIGITS = 4300


class NumberOutOfRange(ValueError):
    """A JSON number askd cannot hold: too many digits, or past a double."""


def _int(text: str) -> int:
    if len(text) - text.startswith("-") > MAX_INT_DIGITS:
        raise NumberOutOfRange(f"a number has more than {MAX_INT_DIGITS} digits")
    return int(text)


def _float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise NumberOutOfRange(f"the number {text[:40]} is out of range")
    return value


def _json_loads(data: bytes | str) -> Any:
    return json.loads(data, parse_constant=_no_constant, parse_int=_int, parse_float=_float)


def dumps(obj: Any) -> bytes:
    """Compact UTF-8 JSON."""
    try:
        # A copy of the exact size: orjson's own bytes object keeps its
        # 4 KiB working buffer, and a pending question is held as its frame
        # (4,119 B instead of 806 B for a 753-byte frame, measured).
        return memoryview(orjson.dumps(obj)).tobytes()
    except TypeError:  # orjson.JSONEncodeError: an integer beyond 64 bits, a lone surrogate
        text = json.dumps(obj, ensure_ascii=False, separators=(",", ":"))
        try:
            return text.encode()
        except UnicodeEncodeError:
            return json.dumps(obj, separators=(",", ":")).encode()


def not_json(err: BaseException) -> str:
    """Why ``loads`` refused a text, with where it broke when known, as a
    person fixing a line typed by hand needs it."""
    if isinstance(err, json.JSONDecodeError):
        return f"not valid JSON: {err.msg} at line {err.lineno} column {err.colno}"
    if isinstance(err, NumberOutOfRange):
        return f"not valid JSON for askd: {err}"
    return "not valid JSON"


# orjson reads an integer beyond 64 bits as a float, losing its digits. Such
# an integer has at least 19 digits in a row, so a text holding a run that
# long (rare: ids and hashes in strings match too, harmlessly) goes to json,
# which keeps every integer exact. The run is found by mapping every digit to
# "0" and everything else to " " (bytes.translate, in C): a regular
# expression took 10 us on a 600-byte body, this takes 1 us.
_DIGITS_TO_ZERO = bytes(0x30 if 0x30 <= b <= 0x39 else 0x20 for b in range(256))
_LONG_RUN = b"0" * 19


def _raw(data: bytes | str) -> bytes:
    """The text as bytes, without a copy when it is bytes already."""
    if type(data) is bytes:
        return data
    return data.encode("utf-8", "surrogatepass") if isinstance(data, str) else bytes(data)


def _has_long_run(raw: bytes) -> bool:
    return _LONG_RUN in raw.translate(_DIGITS_TO_ZERO)


def loads(data: bytes | str, *, exact_numbers: bool = True) -> Any:
    """Parse JSON text; raises ``ValueError`` (or ``RecursionError``) when it is not.

    ``exact_numbers=False`` is for a reader that uses none of the text's
    numbers, only its strings and flags: it skips the scan for integers
    beyond 64 bits (an eighth of an answer's cost in the core), and such an
    integer comes out as a float."""
    raw = _raw(data)
    return _loads(data, raw, exact_numbers and _has_long_run(raw))


def _loads(data: bytes | str, raw: bytes, long_run: bool) -> Any:
    # ``raw`` is ``data`` as bytes, made once by the caller (loads_bounded
    # reads it again). A str with a lone surrogate is not UTF-8: orjson
    # refuses ``raw`` and json reads ``data`` as it came. ``long_run``: the
    # text holds an integer orjson would not keep exact (``_has_long_run``).
    if long_run:
        return _json_loads(data)
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError:
        # Valid JSON orjson refuses, or not JSON at all: json decides.
        return _json_loads(data)


# Deepest nesting taken in a body or frame (protocol section 14, JSON depth):
# deeper is refused as invalid_request before anything recursive (validation,
# encoding) sees it, so no body can exhaust the stack.
MAX_DEPTH = 64


def too_deep(obj: Any, limit: int = MAX_DEPTH) -> bool:
    """Whether ``obj`` nests containers more than ``limit`` deep (a scalar is 0)."""
    stack: list[tuple[Any, int]] = [(obj, 0)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, dict):
            children: Any = node.values()
        elif isinstance(node, list):
            children = node
        else:
            continue
        if depth >= limit:
            return True
        stack.extend((child, depth + 1) for child in children if isinstance(child, (dict, list)))
    return False


class TooDeep(ValueError):
    """JSON nested deeper than :data:`MAX_DEPTH`."""


# I-JSON (RFC 7493 section 2.2): the integers every JSON reader holds
# exactly, a JavaScript page's and a receipt verifier's included, and the
# only ones RFC 8785 (a receipt's digest, protocol section 16) defines.
MAX_SAFE_INTEGER = 2**53 - 1
# An integer outside that range has at least 16 digits in a row (2**53 has
# 16): a text without such a run (every usual body) needs no walk.
_SAFE_RUN = b"0" * 16
# At most this many integers out of range are named in one refusal.
MAX_NAMED = 20
NOT_IJSON = (
    f"an integer beyond I-JSON's range (-{MAX_SAFE_INTEGER} to {MAX_SAFE_INTEGER}, RFC 7493): "
    "no JavaScript reader holds it exactly; send it as a string"
)


class NotIJson(ValueError):
    """JSON that holds an integer outside I-JSON's range. ``details`` names
    each (``[{"loc": "a.0.b", "msg": ...}]``, the shape pydantic's errors
    take on the wire); ``doc`` is the parsed text, for the frame's ``id``
    and ``type``."""

    def __init__(self, details: list[dict[str, str]], doc: Any) -> None:
        super().__init__(f"{details[0]['loc'] or 'the value'}: {details[0]['msg']}")
        self.details, self.doc = details, doc


def beyond_ijson(obj: Any, limit: int = MAX_NAMED) -> list[str]:
    """The dotted paths (as pydantic writes ``loc``: keys, list indices) of
    the integers in ``obj`` outside I-JSON's range, in document order, at
    most ``limit`` of them; ``""`` is ``obj`` itself."""
    found: list[str] = []
    stack: list[tuple[Any, str]] = [(obj, "")]
    while stack and len(found) < limit:
        node, loc = stack.pop()
        kind = type(node)
        if kind is int:
            if not -MAX_SAFE_INTEGER <= node <= MAX_SAFE_INTEGER:
                found.append(loc)
        elif kind is dict:
            stack.extend((v, f"{loc}.{k}" if loc else str(k)) for k, v in reversed(node.items()))
        elif kind is list:
            stack.extend((v, f"{loc}.{i}" if loc else str(i)) for i, v in reversed(list(enumerate(node))))
    return found


def loads_bounded(data: bytes | str) -> Any:
    """``loads`` for what a peer sends (a body, a frame): raises
    :class:`TooDeep` past ``MAX_DEPTH`` levels, :class:`NotIJson` for an
    integer outside I-JSON's range (nothing askd cannot digest, sign, store
    or push to a page is ever taken: protocol section 5), ``ValueError``
    when it is not JSON (``not_json`` says why)."""
    raw = _raw(data)
    digits = raw.translate(_DIGITS_TO_ZERO)
    try:
        obj = _loads(data, raw, _LONG_RUN in digits)
    except RecursionError:  # deeper than even the parser goes
        raise TooDeep() from None
    # Nesting is at most the number of opening brackets: a text with no more
    # than MAX_DEPTH of them (every usual body) needs no walk.
    if raw.count(b"[") + raw.count(b"{") > MAX_DEPTH and too_deep(obj):
        raise TooDeep()
    if _SAFE_RUN in digits:
        locs = beyond_ijson(obj)
        if locs:
            raise NotIJson([{"loc": loc, "msg": NOT_IJSON} for loc in locs], obj)
    return obj
