"""Hostile HTTP requests against a live daemon: random bytes, invalid UTF-8,
JSON of every shape, ask bodies with wrong types, unknown fields, huge
strings and deep nesting, hostile path ids and ``?wait=`` values. Every
reply is a success the spec allows or its error envelope with the status
that goes with the code; nothing logs an error; the victims stay pending."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from typing import Any
from urllib.parse import quote

import httpx
import pytest
from hypothesis import assume, event, given, settings
from hypothesis import strategies as st

from tests.system.fuzz.conftest import MAX_REQUEST_BYTES, LiveDaemon
from tests.system.fuzz.strategies import answers_not_for, dumps, huge_numbers, json_values, nested, texts
from tests.support.profiles import scaled
from tests.receipts.independent import receipted

# The spec's (and docs/decisions.md's) status for each error code.
STATUS_OF = {
    "invalid_request": 400,
    "invalid_answer": 400,
    "unauthorized": 401,
    "forbidden": 403,
    "not_found": 404,
    "not_pending": 404,
    "session_owner_mismatch": 409,
    "user_offline": 409,
    "too_large": 413,
    "too_many_pending": 429,
}


@pytest.fixture
def http(live: LiveDaemon) -> Iterator[httpx.Client]:
    with httpx.Client(timeout=10) as client:
        yield client


def check(r: httpx.Response, *ok: int) -> Any:
    """The reply is one of ``ok`` or a spec error envelope; returns its JSON."""
    body = r.json()
    if r.status_code in ok:
        return body
    assert set(body) == {"error"}, (r.status_code, body)
    error = body["error"]
    assert set(error) <= {"code", "message", "details"} and isinstance(error["message"], str), body
    assert STATUS_OF.get(error["code"]) == r.status_code, (r.status_code, body)
    return body


questions = st.lists(
    st.fixed_dictionaries(
        {"question": texts | json_values},
        optional={
            "header": texts | json_values,
            "options": st.lists(st.fixed_dictionaries({"label": texts | json_values}, optional={"x": json_values}), max_size=3)
            | json_values,
            "multiSelect": st.booleans() | json_values,
            "x-unknown": json_values,
        },
    ),
    max_size=4,
) | json_values
ask_bodies = st.fixed_dictionaries(
    {"userId": st.just("fuzzer") | texts | json_values, "questions": questions},
    optional={
        "metadata": st.dictionaries(texts, json_values, max_size=3) | json_values,
        "timeoutSeconds": st.floats() | st.integers() | huge_numbers | json_values,
        "maxExtensionSeconds": st.floats() | huge_numbers | json_values,
        "escalate": st.lists(st.fixed_dictionaries({"afterSeconds": huge_numbers | json_values, "to": st.just(["fuzzer"])}), max_size=2),
        "requireOnline": st.booleans() | json_values,
        "parentSessionId": texts | json_values,
        "timeoutSecond": json_values,  # a misspelt field must not pass silently
    },
)
# Valid asks whose free parts (metadata, unknown question fields) are hostile:
# these are taken, pushed to the fuzzing user's tab, read back and cancelled.
valid_asks = st.fixed_dictionaries(
    {
        "userId": st.just("fuzzer"),
        "questions": st.lists(
            st.fixed_dictionaries({"question": st.text(min_size=1, max_size=30)}, optional={"x-any": json_values}),
            min_size=1,
            max_size=3,
            unique_by=lambda q: q["question"],
        ),
        "metadata": st.dictionaries(texts, json_values, max_size=4),
    },
    optional={"timeoutSeconds": st.floats(0.001, 86400) | st.integers(1, 86400)},
)
bodies = (
    valid_asks.map(lambda b: dumps(b).encode())
    | valid_asks.map(lambda b: dumps(b).encode())
    | ask_bodies.map(lambda b: dumps(b).encode())
    | json_values.map(lambda v: dumps(v).encode())
    | st.binary(max_size=300)  # mostly not JSON, often not UTF-8
    | st.integers(MAX_REQUEST_BYTES - 100, MAX_REQUEST_BYTES + 100).map(
        lambda n: dumps({"userId": "fuzzer", "questions": [{"question": "x" * n}]}).encode()
    )
    | st.integers(1, 3000).map(lambda d: dumps({"userId": "fuzzer", "questions": [{"question": "Deep?"}], "metadata": {"m": nested(min(d, 800))}}).encode() if d <= 800 else (b'{"metadata":' + b"[" * d + b"]" * d + b"}"))
)
session_ids = texts.map(lambda t: quote(t.encode("utf-8", "surrogatepass"), safe="")) | st.sampled_from(["%ff", "%ed%a0%80", "a%00b", "x" * 300, "fz-victim"])
waits = st.sampled_from(["", "0", "0.01", "-1", "nan", "inf", "-inf", "1e999", "abc", "0x10", " 0"])


@settings(max_examples=scaled(3.0))
@given(sid=session_ids, body=bodies, wait=st.none() | waits, key=st.none() | st.text(st.characters(min_codepoint=33, max_codepoint=126), max_size=300))
def test_ask_bodies(live: LiveDaemon, http: httpx.Client, tab_for_fuzzer: Any, sid: str, body: bytes, wait: str | None, key: str | None) -> None:
    headers = {**live.headers("agent"), "Content-Type": "application/json"}
    if key is not None:
        headers["Idempotency-Key"] = key
    params = {"wait": wait} if wait is not None else None
    r = http.post(f"{live.url}/v1/sessions/{sid}/questions", content=body, params=params, headers=headers)
    event(f"ask: {r.status_code}")
    made = check(r, 200, 201)
    if r.status_code >= 400:
        return
    # A question that was taken must be readable, answerable and cancellable.
    rid = made["requestId"]
    result = check(http.get(f"{live.url}/v1/sessions/{sid}/questions/{rid}", headers=live.headers("agent")), 200)
    assert result["requestId"] == rid
    check(http.get(f"{live.url}/v1/sessions/{sid}/questions", headers=live.headers("agent")), 200)
    if sid in ("fz-own", "fz-victim"):
        return  # cancelling would end the victims too
    check(http.post(f"{live.url}/v1/sessions/{sid}/cancel", headers=live.headers("agent")), 200)
    assert check(http.get(f"{live.url}/v1/sessions/{sid}/questions/{rid}", headers=live.headers("agent")), 200)["status"] != "pending"


@settings(max_examples=scaled(0.5))
@given(sid=session_ids, rid=session_ids, wait=st.none() | waits)
def test_result_reads_with_hostile_ids(live: LiveDaemon, http: httpx.Client, sid: str, rid: str, wait: str | None) -> None:
    params = {"wait": wait} if wait is not None else None
    r = http.get(f"{live.url}/v1/sessions/{sid}/questions/{rid}", params=params, headers=live.headers("agent"))
    check(r)


@settings(max_examples=scaled(0.5))
@given(body=answers_not_for("Untouched?").map(lambda a: dumps({"answers": a}).encode()) | bodies)
def test_admin_answers_to_a_victim(live: LiveDaemon, http: httpx.Client, victims: list[dict[str, Any]], body: bytes) -> None:
    try:
        parsed = json.loads(body)
        assume(not (isinstance(parsed, dict) and isinstance(parsed.get("answers"), dict) and "Untouched?" in parsed["answers"]))
    except (ValueError, RecursionError):
        pass
    victim = victims[1]
    r = http.post(
        f"{live.admin_url}/admin/v1/sessions/{victim['sessionId']}/questions/{victim['requestId']}/answer",
        content=body,
        headers={**live.headers("admin"), "Content-Type": "application/json"},
    )
    check(r)


@settings(max_examples=scaled(0.3))
@given(body=json_values.map(lambda v: dumps(v).encode()) | st.binary(max_size=100))
def test_admin_disconnect_bodies(live: LiveDaemon, http: httpx.Client, body: bytes) -> None:
    r = http.post(f"{live.admin_url}/admin/v1/disconnect", content=body, headers=live.headers("admin"))
    check(r, 200)


def test_lone_surrogates_travel_escaped_both_ways(live: LiveDaemon, http: httpx.Client, tab_for_fuzzer: Any) -> None:
    """JSON may carry a lone surrogate ("\\ud800"), which has no UTF-8 form.
    It used to crash the push (a 500 after the question was taken) and make
    the answered result unreadable (500 forever)."""
    body = '{"userId":"fuzzer","questions":[{"question":"Q?","x":"\\udfff"}],"metadata":{"k":"a\\ud800"}}'
    r = http.post(f"{live.url}/v1/sessions/fz-surrogate/questions", content=body, headers=live.headers("agent"))
    rid = check(r, 201)["requestId"]
    pushed = tab_for_fuzzer.next_ask(rid)
    assert pushed["payload"]["metadata"] == {"k": "a\ud800"} and pushed["payload"]["questions"][0]["x"] == "\udfff"
    tab_for_fuzzer.send_raw('{"type":"ask_user_questions_result","sessionId":"fz-surrogate","requestId":"%s","answers":{"Q?":"\\ud800!"}}' % rid)
    result = http.get(f"{live.url}/v1/sessions/fz-surrogate/questions/{rid}", params={"wait": 5}, headers=live.headers("agent"))
    assert receipted(check(result, 200)) == {"requestId": rid, "sessionId": "fz-surrogate", "status": "answered", "answers": {"Q?": "\ud800!"}, "answeredBy": "fuzzer", "via": "ws"}


@pytest.mark.parametrize("path", ["/v1/sessions/fz-cut/questions", "/v1/sessions/fz-cut/questions/r1/extend"])
def test_a_body_cut_off_mid_way_frees_its_handler(live: LiveDaemon, path: str) -> None:
    """A client that hangs up half-way through a body: the handler that was
    waiting for the rest ends (the autouse check finds no handler left).
    The agent handlers' own close hook once forgot to end that wait."""
    port = int(live.url.rsplit(":", 1)[1])
    head = (
        f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
        f"Authorization: {live.headers('agent')['Authorization']}\r\n"
        "Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n"
    )
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(head.encode() + b'{"userId": "alice", "quest')
