"""Bad input over real sockets: malformed frames, binary and oversized frames,
invalid ask bodies. After each, the connection (or the daemon) still works
and no pending question is lost."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.conftest import RunningDaemon, WsClient, q


async def assert_question_survived(daemon: RunningDaemon, session: str, request_id: str) -> None:
    """The question is still pending and a fresh tab gets it re-pushed."""
    assert (await daemon.result(session, request_id)).json()["status"] == "pending"
    tab = await daemon.connect("alice")
    frames = await tab.subscribe(session)
    assert [f["payload"]["requestId"] for f in frames if f["type"] == "ask_user_questions"] == [request_id]
    await tab.close()


# (frame as sent, error code, id echoed)
BAD_FRAMES: list[tuple[str, str, Any]] = [
    ("{not json", "bad_json", None),
    ("", "bad_json", None),
    ('{"type": "ping", "id": 1', "bad_json", None),
    ('{"type": "ping", "id": NaN}', "bad_json", None),  # not JSON, and no browser could read it back
    ("[1, 2]", "invalid_request", None),
    ('"subscribe"', "invalid_request", None),
    ("42", "invalid_request", None),
    ("null", "invalid_request", None),
    ('{"type": "explode", "id": 3}', "unknown_type", 3),
    ('{"id": "no-type"}', "unknown_type", "no-type"),
    ('{"type": 5, "id": 4}', "unknown_type", 4),
    ('{"type": null, "id": 4}', "unknown_type", 4),
    ('{"type": "ask_user_questions", "id": 5}', "unknown_type", 5),  # a server event
    ('{"type": "subscribe", "id": 6}', "invalid_request", 6),
    ('{"type": "subscribe", "sessionId": 7, "id": 7}', "invalid_request", 7),
    ('{"type": "subscribe", "sessionId": "", "id": 8}', "invalid_request", 8),
    ('{"type": "unsubscribe", "sessionId": ["s1"], "id": "u"}', "invalid_request", "u"),
    ('{"type": "ask_user_questions_result", "sessionId": "s1", "requestId": "r", "answers": [], "id": 9}', "invalid_request", 9),
    ('{"type": "ask_user_questions_result", "sessionId": "s1", "requestId": "r", "answers": "yes", "id": 10}', "invalid_request", 10),
    ('{"type": "ask_user_questions_result", "sessionId": "s1", "requestId": 11, "answers": {}, "id": 11}', "invalid_request", 11),
    ('{"type": "ask_user_questions_result", "sessionId": "s1", "answers": {}, "id": 12}', "invalid_request", 12),
    ('{"type": "ask_user_questions_result", "sessionId": "s1", "requestId": "r", "id": "x"}', "invalid_request", "x"),
]


@pytest.mark.parametrize(("text", "code", "frame_id"), BAD_FRAMES, ids=[f"{c}-{i}" for i, (_, c, _) in enumerate(BAD_FRAMES)])
async def test_bad_frame_gets_an_error_and_nothing_is_lost(daemon: RunningDaemon, text: str, code: str, frame_id: Any) -> None:
    tab = await daemon.connect("alice")
    asked = await daemon.ask("s1", "alice", [q("Kept?")])
    await tab.expect("ask_user_questions")

    await tab.send(text)
    reply = await tab.recv()
    assert reply["type"] == "error", reply
    assert reply["payload"]["code"] == code and reply["payload"]["message"]
    assert reply.get("id") == frame_id
    if code == "invalid_request" and frame_id is not None:
        assert reply["payload"]["details"]  # which field is wrong
    await tab.works()
    await assert_question_survived(daemon, "s1", asked["requestId"])
    assert (await tab.answer("s1", asked["requestId"], {"Kept?": "yes"}))["payload"] == {"accepted": True}


async def test_a_frame_that_is_not_json_says_where_it_broke(daemon: RunningDaemon) -> None:
    tab = await daemon.connect("alice")
    await tab.send('{"type":"subscribe","sessionId":"*"')  # the closing brace forgotten, as a person types it
    reply = await tab.recv()
    assert reply["payload"]["message"] == "frame is not valid JSON: Expecting ',' delimiter at line 1 column 36"
    await tab.works()


async def test_unknown_fields_in_a_frame_are_ignored(daemon: RunningDaemon) -> None:
    tab = await daemon.connect("alice")
    await tab.send({"type": "ping", "id": 1, "extra": {"x": 1}})
    assert await tab.recv() == {"type": "pong", "id": 1}


async def two_tabs_and_a_question(daemon: RunningDaemon) -> tuple[WsClient, WsClient, dict[str, Any]]:
    """Alice's tab about to misbehave, her other tab, and her pending question."""
    tab = await daemon.connect("alice")
    other = await daemon.connect("alice")
    asked = await daemon.ask("s1", "alice")
    await tab.expect("ask_user_questions")
    await other.expect("ask_user_questions")
    return tab, other, asked


async def test_binary_frame_closes_with_1003(daemon: RunningDaemon) -> None:
    tab, other, asked = await two_tabs_and_a_question(daemon)

    await tab.send(json.dumps({"type": "ping"}).encode())
    assert await tab.closed() == 1003
    await other.works()
    await assert_question_survived(daemon, "s1", asked["requestId"])


@pytest.mark.parametrize("settings_overrides", [{"limits": {"max_message_bytes": 1024}}])
async def test_frame_over_the_limit_closes_with_1009(daemon: RunningDaemon) -> None:
    tab, other, asked = await two_tabs_and_a_question(daemon)

    # just under the limit is fine
    small = {"type": "ping", "id": 1, "pad": "x" * 900}
    await tab.send(small)
    assert await tab.recv() == {"type": "pong", "id": 1}

    await tab.send({"type": "ping", "pad": "x" * 2000})
    assert await tab.closed() == 1009
    await other.works()
    await assert_question_survived(daemon, "s1", asked["requestId"])


GOOD = {"userId": "alice", "questions": [{"question": "Fine?"}]}


def body_with(**changes: Any) -> dict[str, Any]:
    return {**GOOD, **changes}


# (name, raw body) for every validation rule of spec section 4 and the ask body's fields
BAD_BODIES: list[tuple[str, Any]] = [
    ("no-questions-field", {"userId": "alice"}),
    ("empty-questions", body_with(questions=[])),
    ("too-many-questions", body_with(questions=[{"question": f"Q{i}?"} for i in range(21)])),
    ("questions-not-a-list", body_with(questions={"question": "A?"})),
    ("question-not-an-object", body_with(questions=["Which?"])),
    ("missing-question-text", body_with(questions=[{"header": "H"}])),
    ("empty-question-text", body_with(questions=[{"question": ""}])),
    ("non-string-question", body_with(questions=[{"question": 42}])),
    ("duplicate-question-text", body_with(questions=[{"question": "Same?"}, {"question": "Same?"}])),
    ("empty-label", body_with(questions=[{"question": "A?", "options": [{"label": ""}]}])),
    ("missing-label", body_with(questions=[{"question": "A?", "options": [{"description": "d"}]}])),
    ("duplicate-labels", body_with(questions=[{"question": "A?", "options": [{"label": "x"}, {"label": "x"}]}])),
    ("options-not-a-list", body_with(questions=[{"question": "A?", "options": "x"}])),
    ("multiselect-not-bool", body_with(questions=[{"question": "A?", "multiSelect": "yes"}])),
    ("header-not-string", body_with(questions=[{"question": "A?", "header": 1}])),
    ("preview-not-string", body_with(questions=[{"question": "A?", "options": [{"label": "x", "preview": ["a"]}]}])),
    ("no-user", {"questions": GOOD["questions"]}),
    ("empty-user", body_with(userId="")),
    ("user-not-string", body_with(userId=7)),
    ("metadata-not-object", body_with(metadata=[1])),
    ("timeout-zero", body_with(timeoutSeconds=0)),
    ("timeout-negative", body_with(timeoutSeconds=-1)),
    ("timeout-over-max", body_with(timeoutSeconds=86401)),
    ("timeout-string", body_with(timeoutSeconds="10")),
    ("timeout-bool", body_with(timeoutSeconds=True)),
    ("require-online-not-bool", body_with(requireOnline="true")),
    ("parent-not-string", body_with(parentSessionId=3)),
    ("parent-is-self", body_with(parentSessionId="s1")),
    ("unknown-top-level-field", body_with(timeoutSecond=10)),
    ("body-a-list", [GOOD]),
    ("body-a-string", "hello"),
    ("body-null", None),
]


@pytest.mark.parametrize(("name", "body"), BAD_BODIES, ids=[n for n, _ in BAD_BODIES])
async def test_bad_ask_body_is_400_with_details(daemon: RunningDaemon, name: str, body: Any) -> None:
    kept = await daemon.ask("s1", "alice", [q("Kept?")])
    r = await daemon.http.post(f"{daemon.url}/v1/sessions/s1/questions", json=body, headers=daemon.agent_headers)
    assert r.status_code == 400, r.text
    error = r.json()["error"]
    assert error["code"] == "invalid_request" and error["message"]
    assert error["details"], error
    assert all(set(d) == {"loc", "msg"} for d in error["details"])
    assert [p["requestId"] for p in (await daemon.admin("GET", "/admin/v1/pending")).json()["pending"]] == [kept["requestId"]]
    await daemon.ask("s1", "alice", [q("Still works?")])


@pytest.mark.parametrize("raw", [b"{not json", b"", b"\xff\xfe", b'{"userId": "alice",'])
async def test_ask_body_that_is_not_json_is_400_with_details(daemon: RunningDaemon, raw: bytes) -> None:
    kept = await daemon.ask("s1", "alice")
    r = await daemon.http.post(
        f"{daemon.url}/v1/sessions/s1/questions",
        content=raw,
        headers={**daemon.agent_headers, "Content-Type": "application/json"},
    )
    assert r.status_code == 400
    error = r.json()["error"]
    assert error["code"] == "invalid_request" and error["details"]
    assert (await daemon.result("s1", kept["requestId"])).json()["status"] == "pending"


async def test_a_body_that_is_not_json_says_where_it_broke(daemon: RunningDaemon) -> None:
    raw = b'{"userId": "alice",\n "questions": [{"question": "Which?"}],\n "timeoutSeconds": 60,}'  # a trailing comma
    r = await daemon.http.post(
        f"{daemon.url}/v1/sessions/s1/questions", content=raw, headers={**daemon.agent_headers, "Content-Type": "application/json"}
    )
    assert r.status_code == 400
    assert r.json()["error"]["message"] == "request body is not valid JSON: Expecting property name enclosed in double quotes at line 3 column 23"


async def test_options_as_plain_strings_say_to_use_label_objects(daemon: RunningDaemon) -> None:
    body = {"userId": "alice", "questions": [{"question": "Which database?", "options": ["PostgreSQL", "SQLite"]}]}
    r = await daemon.http.post(f"{daemon.url}/v1/sessions/s1/questions", json=body, headers=daemon.agent_headers)
    assert r.status_code == 400
    error = r.json()["error"]
    assert error["message"] == (
        'invalid request body: questions.0.options.0: Value error, an option is an object: write {"label": "..."},'
        " not a plain string (and 1 more in details)"
    )
    assert [d["loc"] for d in error["details"]] == ["questions.0.options.0", "questions.0.options.1"]


async def test_unknown_fields_inside_questions_pass_through(daemon: RunningDaemon) -> None:
    tab = await daemon.connect("alice")
    questions = [{"question": "A?", "ui": {"rows": 3}, "options": [{"label": "x", "icon": "star"}]}]
    await daemon.ask("s1", "alice", questions)
    assert (await tab.expect("ask_user_questions"))["payload"]["questions"] == questions


@pytest.mark.parametrize(
    ("params", "headers"),
    [
        ({"wait": "-1"}, {}),
        ({"wait": "soon"}, {}),
        ({"wait": "nan"}, {}),
        ({"wait": "inf"}, {}),
        ({}, {"Idempotency-Key": "k" * 257}),
    ],
)
async def test_bad_wait_or_idempotency_key_is_400(daemon: RunningDaemon, params: dict, headers: dict) -> None:
    body = await daemon.ask("s1", "alice", params=params, headers=headers, expect=400)
    assert body["error"]["code"] == "invalid_request" and body["error"]["details"]
    assert (await daemon.admin("GET", "/admin/v1/stats")).json()["asked"] == 0


@pytest.mark.parametrize("settings_overrides", [{"limits": {"max_request_bytes": 1 << 20}}])
async def test_a_preview_is_pushed_as_sent_up_to_its_limit(daemon: RunningDaemon) -> None:
    tab = await daemon.connect("alice")
    longest = "```diff\n" + "+" * (100_000 - 12) + "\n```"
    assert len(longest) == 100_000
    questions = [{"question": "Apply?", "options": [{"label": "yes", "preview": longest}, {"label": "no"}]}]
    await daemon.ask("s1", "alice", questions)
    assert (await tab.expect("ask_user_questions"))["payload"]["questions"] == questions
    questions[0]["options"][0]["preview"] += "+"
    r = await daemon.http.post(
        f"{daemon.url}/v1/sessions/s1/questions", json={"userId": "alice", "questions": questions}, headers=daemon.agent_headers
    )
    assert r.status_code == 400 and "preview" in str(r.json()["error"]["details"])
