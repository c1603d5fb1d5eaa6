"""askd's JSON codec: orjson's speed with the standard library's reach.
Whatever valid JSON askd took before it still takes and sends back the same."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from askd.protocol import codec

JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)


@given(JSON_VALUES)
def test_round_trips_what_json_round_trips(value: object) -> None:
    text = codec.dumps(value)
    assert codec.loads(text) == json.loads(text.decode("utf-8", "surrogatepass")) == json.loads(json.dumps(value))


def test_integers_beyond_64_bits_round_trip_exactly() -> None:
    big = 2**70 + 1
    assert codec.dumps({"n": big}) == b'{"n":%d}' % big


def test_a_lone_surrogate_goes_out_escaped() -> None:
    value = codec.loads(b'{"a":"\\ud800"}')
    assert value == {"a": "\ud800"}
    assert codec.dumps(value) == b'{"a":"\\ud800"}'


def test_non_ascii_goes_out_as_utf8() -> None:
    assert codec.dumps({"q": "Which 数据库?"}) == '{"q":"Which 数据库?"}'.encode()


@pytest.mark.parametrize("text", [b"NaN", b"[Infinity]", b'{"a": -Infinity}', b"{not json", b"", b"[1,]", b'"\xff"'])
def test_not_json_raises_value_error(text: bytes) -> None:
    with pytest.raises(ValueError):
        codec.loads(text)


def _rss() -> int:
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) * 1024 for line in f if line.startswith("VmRSS:"))


def test_a_kept_frame_costs_about_its_size() -> None:
    # A pending question is held as its encoded frame for as long as it
    # waits: orjson's bytes (a 4 KiB buffer each) would cost 5x that.
    frame = {"type": "ask_user_questions", "payload": {"questions": [{"question": "Which?" * 100}]}}
    n, before = 20_000, _rss()
    kept = [codec.dumps({**frame, "sessionId": f"s{i}"}) for i in range(n)]
    per_frame = (_rss() - before) / n
    assert len(kept[0]) < 700 and per_frame < 1_500, per_frame


@pytest.mark.parametrize("number", [-(2**63) - 1, 2**64, 10**30, -(10**25)])
def test_an_integer_beyond_64_bits_stays_exact(number: int) -> None:
    # orjson alone reads these as floats; found by the round-trip property.
    text = f'{{"n": {number}, "in": [{number}]}}'
    assert codec.loads(text) == {"n": number, "in": [number]}
    assert codec.loads(text.encode()) == {"n": number, "in": [number]}


@given(JSON_VALUES)
def test_a_frame_as_text_reads_as_its_bytes_do(value: object) -> None:
    # A WebSocket frame reaches loads_bounded as str, a body as bytes: both
    # read alike (the str is made bytes once, for orjson and the checks).
    raw = codec.dumps(value)
    text = raw.decode("utf-8", "surrogatepass")
    assert codec.loads_bounded(text) == codec.loads_bounded(raw) == json.loads(text)


def test_a_text_holding_a_lone_surrogate_still_reads() -> None:
    # Not UTF-8 once made bytes: orjson refuses those, json reads the text.
    assert codec.loads_bounded('{"a": "\ud800", "b": "数"}') == {"a": "\ud800", "b": "数"}
    assert codec.loads('["\udfff"]') == ["\udfff"]


def test_without_exact_numbers_strings_are_exact_and_a_long_integer_is_a_float() -> None:
    # For readers of texts and flags only (the answer check): no scan.
    text = '{"q": "id 12345678901234567890123", "multiSelect": true, "n": 12345678901234567890123}'
    value = codec.loads(text, exact_numbers=False)
    assert value["q"] == "id 12345678901234567890123" and value["multiSelect"] is True
    assert isinstance(value["n"], float)
    assert codec.loads(text)["n"] == 12345678901234567890123
