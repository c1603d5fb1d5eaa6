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


SAFE = codec.MAX_SAFE_INTEGER
IJSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-SAFE, SAFE) | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)


@given(IJSON_VALUES)
def test_a_frame_as_text_reads_as_its_bytes_do(value: object) -> None:
    # A WebSocket frame reaches loads_bounded as str, a body as bytes: both
    # read alike (the str is made bytes once, for orjson and the checks).
    raw = codec.dumps(value)
    text = raw.decode("utf-8", "surrogatepass")
    assert codec.loads_bounded(text) == codec.loads_bounded(raw) == json.loads(text)


def _beyond(value: object, loc: str = "") -> list[str]:
    """The paths of the integers outside I-JSON's range, the slow obvious way."""
    if isinstance(value, bool):
        return []
    if isinstance(value, int):
        return [] if -SAFE <= value <= SAFE else [loc]
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else []
    return [found for k, v in items for found in _beyond(v, f"{loc}.{k}" if loc else str(k))]


@given(JSON_VALUES)
def test_a_peer_s_text_is_refused_exactly_when_an_integer_is_beyond_ijson(value: object) -> None:
    # What a peer sends (a body, a frame) must hold nothing a receipt's
    # digest (RFC 8785), a JavaScript page or a verifier cannot read exactly.
    raw = codec.dumps(value)
    expected = _beyond(json.loads(raw))[: codec.MAX_NAMED]
    if not expected:
        assert codec.loads_bounded(raw) == json.loads(raw)
        return
    with pytest.raises(codec.NotIJson) as refused:
        codec.loads_bounded(raw)
    assert [d["loc"] for d in refused.value.details] == expected
    assert refused.value.doc == json.loads(raw)
    assert codec.loads(raw) == json.loads(raw)  # what askd stored before still reads


@pytest.mark.parametrize(
    ("text", "locs"),
    [
        ('{"a": {"b": [1, %d]}}' % (SAFE + 1), ["a.b.1"]),
        ('{"n": -%d}' % (SAFE + 1), ["n"]),
        ('{"n": %d, "m": -%d}' % (SAFE, SAFE), []),  # the range's ends are in it
        ('{"args": {"n": %s}, "x": [%s]}' % ("9" * 309, "1" + "0" * 400), ["args.n", "x.0"]),
        ('{"id": "%s", "n": 1.5e300}' % ("9" * 40), []),  # digits in a string, a float: fine
        ("%d" % (2**53), [""]),
    ],
)
def test_an_integer_beyond_ijson_is_named_where_it_is(text: str, locs: list[str]) -> None:
    if not locs:
        assert codec.loads_bounded(text) == json.loads(text)
        return
    with pytest.raises(codec.NotIJson) as refused:
        codec.loads_bounded(text.encode())
    assert [d["loc"] for d in refused.value.details] == locs
    assert "RFC 7493" in refused.value.details[0]["msg"]


def test_a_refusal_names_at_most_max_named_integers() -> None:
    text = "[" + ",".join(["9" * 20] * (codec.MAX_NAMED + 5)) + "]"
    with pytest.raises(codec.NotIJson) as refused:
        codec.loads_bounded(text)
    assert [d["loc"] for d in refused.value.details] == [str(i) for i in range(codec.MAX_NAMED)]


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
