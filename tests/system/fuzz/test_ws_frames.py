"""Hostile WebSocket frames against a live daemon: whatever arrives, the
daemon replies with one of the spec's frames (an ``error`` with a spec code
for anything malformed), keeps the connection unless the spec says to close
it, logs no error, and leaves every pending question as it was."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import ClientConnection, connect

from tests.system.fuzz.conftest import MAX_MESSAGE_BYTES, LiveDaemon
from tests.system.fuzz.strategies import answers_not_for, dumps, huge_numbers, json_values, nested, texts
from tests.support.profiles import scaled

WS_ERROR_CODES = {"bad_json", "invalid_request", "unknown_type", "forbidden", "invalid_answer"}
FRAME_TYPES = ["subscribe", "unsubscribe", "ask_user_questions_result", "ping", "extend", "decline"]


class Tab:
    """One user's socket, reopened whenever the daemon (rightly) closed it."""

    def __init__(self, live: LiveDaemon) -> None:
        self.live = live
        self.n = 0
        self.conn: ClientConnection | None = None
        self.opened = contextlib.ExitStack()

    def socket(self) -> ClientConnection:
        if self.conn is None:
            self.conn = self.opened.enter_context(connect(self.live.ws_url, additional_headers={"Authorization": f"Bearer {self.live.token('user', 'fuzzer')}"}, open_timeout=5))
        return self.conn

    def exchange(self, message: str | bytes) -> tuple[list[dict[str, Any]], int | None]:
        """Send ``message`` then a ping; return the replies before the pong,
        or the close code if the daemon closed the connection."""
        self.n += 1
        sync = f"sync-{self.n}"
        conn = self.socket()
        replies = []
        try:
            conn.send(message)
            conn.send(json.dumps({"type": "ping", "id": sync}))
            while True:
                frame = json.loads(conn.recv(timeout=5))
                if frame == {"type": "pong", "id": sync}:
                    return replies, None
                replies.append(frame)
        except ConnectionClosed as closed:
            self.conn = None
            return replies, closed.rcvd.code if closed.rcvd else 1006  # dropped without a close frame

    def close(self) -> None:
        self.opened.close()


@pytest.fixture
def tab(live: LiveDaemon) -> Iterator[Tab]:
    t = Tab(live)
    yield t
    t.close()


def check_reply(frame: dict[str, Any]) -> None:
    kind = frame.get("type")
    if kind == "error":
        assert frame["payload"]["code"] in WS_ERROR_CODES, frame
        assert isinstance(frame["payload"]["message"], str)
    elif kind == "ack":
        payload = frame["payload"]
        # Nothing the fuzzer sends may ever be taken as an answer.
        assert payload.get("accepted") is not True, frame
        refused = ({"accepted": False, "reason": "not_pending"}, {"extended": False, "reason": "not_pending"})
        assert payload == {} or payload in refused or set(payload) == {"repushed"}, frame
    elif kind == "session_snapshot":
        assert set(frame["payload"]) == {"active", "pending"}, frame
    elif kind == "ask_user_questions":
        # Only the fuzzing user's own question may be re-pushed to it.
        assert frame["sessionId"] == "fz-own", frame
    else:
        assert kind == "pong", frame


def fits(message: str) -> bool:
    return len(message.encode("utf-8", "surrogatepass")) <= MAX_MESSAGE_BYTES


# Frames shaped like the real ones, with wrong types, hostile values and unknown fields.
shaped_frames = st.fixed_dictionaries(
    {"type": st.sampled_from(FRAME_TYPES) | texts | json_values},
    optional={
        "id": json_values,
        "sessionId": texts | json_values,
        "requestId": texts | json_values,
        "answers": answers_not_for("Untouched?"),
        "seconds": huge_numbers | st.floats() | json_values,
        "reason": texts | json_values,
        "extra": json_values,
    },
).filter(lambda f: f.get("type") != "ask_user_questions_result" or not isinstance(f.get("answers"), dict) or "Untouched?" not in f["answers"])


@settings(max_examples=scaled(2.0))
@given(frame=shaped_frames | json_values)
def test_any_json_frame_gets_spec_replies_and_keeps_the_connection(tab: Tab, frame: Any) -> None:
    message = dumps(frame)
    replies, closed = tab.exchange(message)
    if fits(message):
        assert closed is None, f"closed with {closed} on {message[:200]!r}"
    else:
        assert closed == 1009
    for reply in replies:
        check_reply(reply)


@settings(max_examples=scaled(0.5))
@given(text=st.text(max_size=200) | st.binary(max_size=50).map(lambda b: b.decode("latin-1")))
def test_text_that_is_not_json_is_bad_json(tab: Tab, text: str) -> None:
    try:
        json.loads(text)
    except ValueError:
        replies, closed = tab.exchange(text)
        assert closed is None
        assert [r["payload"]["code"] for r in replies] == ["bad_json"]


@settings(max_examples=scaled(0.3))
@given(size=st.integers(MAX_MESSAGE_BYTES - 64, MAX_MESSAGE_BYTES + 64), kind=st.sampled_from(["sessionId", "answers", "id"]))
def test_frames_around_the_size_limit(tab: Tab, size: int, kind: str) -> None:
    frame: dict[str, Any] = {"type": "ask_user_questions_result", "sessionId": "fz-victim", "requestId": "r", "answers": {"x": ""}}
    base = len(dumps(frame))
    pad = "x" * max(0, size - base)
    if kind == "answers":
        frame["answers"] = {"x": pad}
    else:
        frame[kind] = pad
    message = dumps(frame)
    replies, closed = tab.exchange(message)
    if len(message.encode()) > MAX_MESSAGE_BYTES:
        assert closed == 1009
    else:
        assert closed is None
        for reply in replies:
            check_reply(reply)


@settings(max_examples=scaled(0.3))
@given(depth=st.integers(1, 5000), where=st.sampled_from(["frame", "answers", "id", "extra"]))
def test_deep_nesting(tab: Tab, depth: int, where: str) -> None:
    frame: Any = {"type": "ask_user_questions_result", "sessionId": "fz-own", "requestId": "r", "answers": {"q": "a"}}
    if where == "frame":
        frame = nested(depth, frame)
    else:
        frame[where] = nested(depth)
    message = json.dumps(frame, check_circular=False) if depth < 900 else deep_text(frame, depth, where)
    replies, closed = tab.exchange(message)
    if not fits(message):
        assert closed == 1009
        return
    assert closed is None
    for reply in replies:
        check_reply(reply)


def deep_text(frame: Any, depth: int, where: str) -> str:
    """The JSON text of a frame too deep for ``json.dumps``."""
    inner = '{"a":' * ((depth + 1) // 2)
    body = "[" * (depth // 2) + "0" + "]" * (depth // 2)
    text = inner + body + "}" * ((depth + 1) // 2)
    if where == "frame":
        return text
    return '{"type":"ask_user_questions_result","sessionId":"fz-own","requestId":"r","answers":{"q":"a"},"%s":%s}' % (
        "answers" if where == "answers" else where,
        text,
    )


def test_binary_and_invalid_utf8_close_only_that_connection(tab: Tab, live: LiveDaemon) -> None:
    replies, closed = tab.exchange(b'{"type":"ping"}')
    assert closed == 1003 and replies == []
    conn = tab.socket()
    conn.send(b'{"type":"ping","id":"\xff\xfe"}', text=True)  # a text frame that is not UTF-8
    with pytest.raises(ConnectionClosed):
        conn.recv(timeout=5)
    tab.conn = None
    replies, closed = tab.exchange('{"type":"ping","id":1}')
    assert closed is None and replies == [{"type": "pong", "id": 1}]
