"""Hypothesis strategies for hostile input: JSON of every shape, strings with
lone surrogates and control characters, sizes around the limits, deep nesting."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import strategies as st

# Ids and texts the daemon really holds, so some hostile frames hit real targets.
REAL_TEXTS = ["fz-own", "fz-victim", "*", "Untouched?", "fuzzer", "victim"]
NASTY_TEXTS = ["", " ", "\x00", "\ud800", "a\udfffb", "\U0001f600", "\u202e", "\n", "é" * 3, "null", "[]", "{}"]

texts = st.text(max_size=40) | st.sampled_from(REAL_TEXTS + NASTY_TEXTS)
scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | texts
)
# Numbers no double holds (309 to 4,300 digits: the most Python reads) and
# doubles at the edge: every number askd reads must be range-checked.
huge_numbers = (
    st.integers(309, 4300).map(lambda n: int("9" * n))
    | st.integers(309, 4300).map(lambda n: -int("9" * n))
    | st.sampled_from([1.7976931348623157e308, -1.7976931348623157e308, 5e-324, 0, -0.0])
)
json_values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(texts, inner, max_size=4),
    max_leaves=12,
)


def nested(depth: int, leaf: Any = 0) -> Any:
    out = leaf
    for i in range(depth):
        out = [out] if i % 2 else {"a": out}
    return out


def dumps(value: Any) -> str:
    # ensure_ascii escapes lone surrogates, which cannot travel as UTF-8.
    return json.dumps(value)


def answers_not_for(question: str) -> st.SearchStrategy[Any]:
    """Answers of any shape that can never validly answer ``question``."""
    return json_values.filter(lambda v: not (isinstance(v, dict) and question in v))
