"""``canonical`` renders with orjson what orjson renders as RFC 8785 does,
and with rfc8785 the rest: the bytes must be rfc8785's for every value, or
receipts and the audit chain would stop verifying elsewhere."""

from __future__ import annotations

from typing import Any

import orjson
import rfc8785
from hypothesis import given, settings
from hypothesis import strategies as st

from askd.receipts.digest import _as_ijson, _orjson_is_jcs, canonical


def reference(value: Any) -> bytes:
    """RFC 8785 by the rfc8785 package alone (what ``canonical`` did before orjson)."""
    try:
        return rfc8785.dumps(value)
    except (rfc8785.CanonicalizationError, UnicodeEncodeError):
        return rfc8785.dumps(_as_ijson(value))


def test_every_character_escapes_as_rfc8785_escapes_it() -> None:
    for code in range(0x110000):
        if 0xD800 <= code <= 0xDFFF:
            continue
        text = chr(code)
        assert orjson.dumps(text) == rfc8785.dumps(text), hex(code)


scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**60), max_value=2**60),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(),
    st.text(alphabet=st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF), max_size=2),  # lone surrogates
)
json_values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(st.one_of(st.text(max_size=6), st.sampled_from(["a", "\ue000", "\U0001f600", "B"])), inner, max_size=4),
    ),
    max_leaves=20,
)


@settings(max_examples=400, deadline=None)
@given(json_values)
def test_canonical_is_rfc8785s_bytes_for_any_json_value(value: Any) -> None:
    assert canonical(value) == reference(value)


def test_what_orjson_renders_differently_goes_to_rfc8785() -> None:
    # Keys beyond ASCII sort by UTF-16 code units in JCS: U+1F600 (a surrogate
    # pair, 0xD83D...) before U+E000; by code point it would come after.
    keys = {"\ue000": 1, "\U0001f600": 2}
    assert not _orjson_is_jcs(keys)
    assert canonical(keys) == rfc8785.dumps(keys) == '{"\U0001f600":2,"\ue000":1}'.encode()
    assert canonical({"n": 1.0}) == b'{"n":1}'  # orjson would write 1.0
    assert canonical({"n": 2**53}) == reference({"n": 2**53})  # beyond I-JSON: the double it rounds to
    assert _orjson_is_jcs({"seq": 1, "to": ["u-1"], "by": None, "data": {"defaulted": False}})
