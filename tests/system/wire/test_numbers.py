"""Every number askd reads is range-checked (issue 29, items 5 and 15):
an integer of hundreds or thousands of digits, a float beyond a double, a
value over a configured bound; each is ``400 invalid_request`` naming its
field in ``details[].loc`` (a frame: an ``error``, and the socket stays
open), never a ``500`` or a dropped socket."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.conftest import RunningDaemon, q
from tests.system.wire.test_front_door import open_raw, response_then_eof

# Raw JSON numbers: past a double (309 digits), at Python's int-parsing limit
# (4,300 digits) and past it, and a float literal that overflows a double.
HUGE = ["1" + "0" * 308, "9" * 4300, "9" * 5000, "1e999", "-" + "9" * 400]
# Refused as JSON (codec.NumberOutOfRange), before any field is read.
UNREADABLE = {"9" * 5000, "1e999"}


def ask_text(**fields: str) -> bytes:
    """An ask body with ``fields`` written in as raw JSON."""
    extra = "".join(f', "{name}": {value}' for name, value in fields.items())
    return f'{{"userId": "alice", "questions": [{{"question": "Which?"}}]{extra}}}'.encode()


async def post_raw(daemon: RunningDaemon, path: str, raw: bytes) -> Any:
    return await daemon.http.post(
        f"{daemon.url}{path}", content=raw, headers={**daemon.agent_headers, "Content-Type": "application/json"}
    )


def invalid(r: Any) -> dict[str, Any]:
    assert r.status_code == 400, r.text
    error = r.json()["error"]
    assert error["code"] == "invalid_request" and error["details"], error
    return error


@pytest.mark.parametrize("number", HUGE, ids=["309-digits", "4300-digits", "5000-digits", "1e999", "negative-400-digits"])
@pytest.mark.parametrize(
    ("field", "text", "loc"),
    [
        ("timeoutSeconds", "{}", "timeoutSeconds"),
        ("maxExtensionSeconds", "{}", "maxExtensionSeconds"),
        ("escalate", '[{{"afterSeconds": {}, "to": ["bob"]}}]', "escalate.0.afterSeconds"),
    ],
)
async def test_a_huge_number_in_an_ask_is_400_naming_its_field(
    daemon: RunningDaemon, number: str, field: str, text: str, loc: str
) -> None:
    error = invalid(await post_raw(daemon, "/v1/sessions/s1/questions", ask_text(**{field: text.format(number)})))
    if number not in UNREADABLE:
        assert [d["loc"] for d in error["details"]] == [loc], error
    await daemon.ask("s1", "alice", [q("Still works?")])


@pytest.mark.parametrize("number", HUGE, ids=["309-digits", "4300-digits", "5000-digits", "1e999", "negative-400-digits"])
async def test_a_huge_extension_is_400_naming_seconds(daemon: RunningDaemon, number: str) -> None:
    asked = await daemon.ask("s1", "alice", [q("Which?")])
    path = f"/v1/sessions/s1/questions/{asked['requestId']}/extend"
    error = invalid(await post_raw(daemon, path, f'{{"seconds": {number}}}'.encode()))
    if number not in UNREADABLE:
        assert [d["loc"] for d in error["details"]] == ["seconds"], error
    assert (await daemon.result("s1", asked["requestId"])).json()["expiresAt"] == asked["expiresAt"]


@pytest.mark.parametrize("number", HUGE, ids=["309-digits", "4300-digits", "5000-digits", "1e999", "negative-400-digits"])
async def test_a_huge_extend_frame_gets_an_error_and_the_socket_stays(daemon: RunningDaemon, number: str) -> None:
    tab = await daemon.connect("alice")
    asked = await daemon.ask("s1", "alice", [q("Which?")], maxExtensionSeconds=600)
    await tab.expect("ask_user_questions")
    await tab.send(f'{{"type": "extend", "sessionId": "s1", "requestId": "{asked["requestId"]}", "seconds": {number}, "id": 7}}')
    reply = await tab.recv()
    assert reply["type"] == "error", reply
    if number not in UNREADABLE:
        assert reply["payload"]["code"] == "invalid_request" and reply["id"] == 7
        assert [d["loc"] for d in reply["payload"]["details"]] == ["seconds"]
    else:
        assert reply["payload"]["code"] == "bad_json"
    await tab.works()


@pytest.mark.parametrize(
    ("body", "loc"),
    [
        ({"maxExtensionSeconds": 86401}, "maxExtensionSeconds"),
        ({"timeoutSeconds": 86401}, "timeoutSeconds"),
        ({"parentSessionId": "s1"}, "parentSessionId"),
        ({"parentSessionId": "*"}, "parentSessionId"),
    ],
)
async def test_a_check_made_outside_pydantic_names_its_field(daemon: RunningDaemon, body: dict[str, Any], loc: str) -> None:
    r = await daemon.http.post(
        f"{daemon.url}/v1/sessions/s1/questions",
        json={"userId": "alice", "questions": [{"question": "Which?"}], **body},
        headers=daemon.agent_headers,
    )
    error = invalid(r)
    assert [d["loc"] for d in error["details"]] == [loc], error
    assert error["message"].startswith(f"{loc}: "), error


async def test_a_parent_already_set_is_named(daemon: RunningDaemon) -> None:
    await daemon.ask("child", "alice", parentSessionId="p1")
    r = await daemon.http.post(
        f"{daemon.url}/v1/sessions/child/questions",
        json={"userId": "alice", "questions": [{"question": "Which?"}], "parentSessionId": "p2"},
        headers=daemon.agent_headers,
    )
    assert [d["loc"] for d in invalid(r)["details"]] == ["parentSessionId"]


async def test_a_json_number_askd_cannot_hold_says_so(daemon: RunningDaemon) -> None:
    error = invalid(await post_raw(daemon, "/v1/sessions/s1/questions", ask_text(metadata='{"n": ' + "9" * 5000 + "}")))
    assert error["message"] == "request body is not valid JSON for askd: a number has more than 4300 digits"


@pytest.mark.parametrize(("length", "status"), [("9" * 5000, 413), ("0" * 5000 + "10", 400), ("\xb2", 400), ("1x", 400)])
async def test_a_content_length_askd_cannot_read_is_refused_not_a_500(daemon: RunningDaemon, length: str, status: int) -> None:
    port = daemon.daemon.port
    reader, writer = await open_raw(port)
    writer.write(
        f"POST /v1/sessions/s1/questions HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {daemon.token('agent')}\r\n"
        f"Content-Type: application/json\r\nContent-Length: {length}\r\n\r\n".encode("latin-1")
    )
    got, body = await response_then_eof(reader)
    writer.close()
    assert got == status
    assert json.loads(body)["error"]["code"] == ("too_large" if status == 413 else "invalid_request")


async def test_a_frame_askd_fails_on_is_answered_and_the_socket_stays(daemon: RunningDaemon, monkeypatch: pytest.MonkeyPatch) -> None:
    """The safety net under the range checks: a frame whose handling raises
    what nobody expected (as an OverflowError did) gets ``error``
    ``internal`` and the socket stays open, with its subscriptions."""
    from askd.server.ws import ws

    tab = await daemon.connect("alice")
    asked = await daemon.ask("s1", "alice", [q("Which?")], maxExtensionSeconds=600)
    await tab.expect("ask_user_questions")

    def broken(*_: Any, **__: Any) -> Any:
        raise OverflowError("as before the fix")

    with monkeypatch.context() as patch:
        patch.setattr(ws, "parse_frame", broken)
        await tab.send({"type": "ping", "id": 1})
        reply = await tab.recv()
        assert reply["type"] == "error" and reply["payload"]["code"] == "internal", reply
    with monkeypatch.context() as patch:
        patch.setattr(daemon.daemon.hub, "extend", broken)
        await tab.send({"type": "extend", "sessionId": "s1", "requestId": asked["requestId"], "seconds": 5, "id": 2})
        reply = await tab.recv()
        assert reply["type"] == "error" and reply["payload"]["code"] == "internal" and reply["id"] == 2, reply
    await tab.works()
    await daemon.admin("POST", f"/admin/v1/sessions/s1/questions/{asked['requestId']}/answer", json={"answers": {"Which?": "x"}})
    assert (await tab.expect("ask_user_questions_cancelled"))["payload"]["requestId"] == asked["requestId"]


# ---- I-JSON at the door (protocol section 5, Errors) ---------------------
# An integer askd took used to stay a question no one could end: its
# receipt's digest (RFC 8785) raised on it, so every withdraw, cancel,
# approve and decline was a 500, and its deadline stopped the clock for
# every other question. Every integer a peer sends is now within I-JSON's
# range (RFC 7493), refused with its field named before anything is stored.

BIG = "9" * 309  # past a double: no digest, no JavaScript reader


async def nothing_stored(daemon: RunningDaemon, tab: Any = None) -> None:
    """No question was taken: none pending, none counted, none pushed."""
    r = await daemon.admin("GET", "/admin/v1/pending")
    assert r.json()["pending"] == [], r.text
    assert (await daemon.admin("GET", "/admin/v1/stats")).json()["asked"] == 0
    if tab is not None:
        await tab.quiet()


def named(error: dict[str, Any], *locs: str) -> None:
    assert [d["loc"] for d in error["details"]] == list(locs), error
    assert error["message"].startswith(f"invalid request body: {locs[0]}: an integer beyond I-JSON's range"), error


@pytest.mark.parametrize(
    ("body", "loc"),
    [
        ('{"to": ["alice"], "action": {"name": "deploy", "arguments": {"env": "prod", "n": %s}}}' % BIG, "action.arguments.n"),
        ('{"to": ["alice"], "action": {"name": "deploy", "arguments": {"list": [1, -%s]}}}' % BIG, "action.arguments.list.1"),
        ('{"userId": "alice", "questions": [{"question": "Which?"}], "metadata": {"ticket": %s}}' % BIG, "metadata.ticket"),
        ('{"userId": "alice", "questions": [{"question": "Which?", "x-rank": %s}]}' % BIG, "questions.0.x-rank"),
        ('{"userId": "alice", "questions": [{"question": "Which?"}], "metadata": {"n": %d}}' % 2**53, "metadata.n"),
        ('{"userId": "alice", "questions": [{"question": "Which?"}], "timeoutSeconds": 30, "onTimeout": {"answers": {"Which?": %s}}}' % BIG, "onTimeout.answers.Which?"),
    ],
    ids=["action-arguments", "arguments-list", "metadata", "question-field", "2**53", "on-timeout"],
)
async def test_an_integer_beyond_ijson_in_an_ask_is_400_naming_it_and_nothing_is_stored(
    daemon: RunningDaemon, body: str, loc: str
) -> None:
    tab = await daemon.connect("alice")
    named(invalid(await post_raw(daemon, "/v1/sessions/s1/questions", body.encode())), loc)
    await nothing_stored(daemon, tab)


async def test_the_largest_integers_i_json_has_are_taken_and_kept_exact(daemon: RunningDaemon) -> None:
    safe = 2**53 - 1
    r = await post_raw(
        daemon, "/v1/sessions/s1/questions",
        ('{"to": ["alice"], "action": {"name": "deploy", "arguments": {"n": %d, "m": -%d}}}' % (safe, safe)).encode(),
    )
    assert r.status_code == 201, r.text
    [listed] = (await daemon.admin("GET", "/admin/v1/pending")).json()["pending"]
    assert listed["action"]["arguments"] == {"n": safe, "m": -safe}


async def pending_question(daemon: RunningDaemon, tab: Any) -> str:
    rid: str = (await daemon.ask("s1", "alice", [q("Which?")]))["requestId"]
    await tab.expect("ask_user_questions")
    return rid


async def still_pending(daemon: RunningDaemon, rid: str) -> None:
    assert (await daemon.result("s1", rid)).json()["status"] == "pending"
    [listed] = (await daemon.admin("GET", "/admin/v1/pending")).json()["pending"]
    assert listed["requestId"] == rid


@pytest.mark.parametrize(
    ("frame", "loc"),
    [
        ('{"type": "ask_user_questions_result", "sessionId": "s1", "requestId": "RID", "answers": {"Which?": %s}, "id": 5}' % BIG, "answers.Which?"),
        ('{"type": "approve", "sessionId": "s1", "requestId": "RID", "arguments": {"n": [%s]}, "id": 5}' % BIG, "arguments.n.0"),
        ('{"type": "decline", "sessionId": "s1", "requestId": "RID", "reason": "no", "x": %s, "id": 5}' % BIG, "x"),
    ],
    ids=["answer", "approve", "decline-extra-field"],
)
async def test_an_integer_beyond_ijson_in_a_frame_is_invalid_request_naming_it(daemon: RunningDaemon, frame: str, loc: str) -> None:
    tab = await daemon.connect("alice")
    rid = await pending_question(daemon, tab)
    await tab.send(frame.replace("RID", rid))
    reply = await tab.recv()
    assert reply["type"] == "error" and reply["id"] == 5, reply
    assert reply["payload"]["code"] == "invalid_request", reply
    assert [d["loc"] for d in reply["payload"]["details"]] == [loc], reply
    await tab.works()
    await still_pending(daemon, rid)


async def test_a_frame_id_beyond_ijson_is_refused_and_not_echoed(daemon: RunningDaemon) -> None:
    tab = await daemon.connect("alice")
    await tab.send('{"type": "ping", "id": %s}' % BIG)
    reply = await tab.recv()
    assert reply["type"] == "error" and "id" not in reply, reply
    assert [d["loc"] for d in reply["payload"]["details"]] == ["id"]
    # The order of protocol section 3 holds: an unknown type is said first.
    await tab.send('{"type": "nope", "n": %s, "id": "u"}' % BIG)
    assert (await tab.recv())["payload"]["code"] == "unknown_type"


@pytest.mark.parametrize(
    ("path", "body", "loc"),
    [
        ("/v1/sessions/s1/questions/RID/answer", '{"answers": {"Which?": %s}, "answeredBy": "alice"}' % BIG, "answers.Which?"),
        ("/v1/sessions/s1/questions/RID/decline", '{"answeredBy": "alice", "n": %s}' % BIG, "n"),
        ("/v1/sessions/s1/questions/RID/extend", '{"seconds": 5, "n": %s}' % BIG, "n"),
    ],
    ids=["agent-answer", "agent-decline", "agent-extend"],
)
async def test_an_integer_beyond_ijson_in_an_agent_body_is_400_and_the_question_stays(
    daemon: RunningDaemon, path: str, body: str, loc: str
) -> None:
    tab = await daemon.connect("alice")
    rid = await pending_question(daemon, tab)
    named(invalid(await post_raw(daemon, path.replace("RID", rid), body.encode())), loc)
    await tab.quiet()
    await still_pending(daemon, rid)


@pytest.mark.parametrize(
    ("method", "path", "body", "loc"),
    [
        ("POST", "/admin/v1/sessions/s1/questions/RID/answer", '{"answers": {"Which?": [%s]}}' % BIG, "answers.Which?.0"),
        ("POST", "/admin/v1/sessions/s1/questions/RID/decline", '{"reason": "no", "n": -%s}' % BIG, "n"),
        ("POST", "/admin/v1/disconnect", '{"all": true, "n": %s}' % BIG, "n"),
        ("PUT", "/admin/v1/groups/ops", '{"members": ["alice"], "n": %s}' % BIG, "n"),
    ],
    ids=["admin-answer", "admin-decline", "admin-disconnect", "admin-group"],
)
async def test_an_integer_beyond_ijson_in_an_admin_body_is_400_and_nothing_changes(
    daemon: RunningDaemon, method: str, path: str, body: str, loc: str
) -> None:
    tab = await daemon.connect("alice")
    rid = await pending_question(daemon, tab)
    r = await daemon.admin(method, path.replace("RID", rid), content=body.encode())
    named(invalid(r), loc)
    await tab.works()  # not disconnected
    await still_pending(daemon, rid)
    assert (await daemon.admin("GET", "/admin/v1/groups")).json()["groups"] == []


@pytest.mark.parametrize("number", ["1e400", "-1e400", "NaN", "Infinity"])
async def test_a_non_finite_number_never_gets_in(daemon: RunningDaemon, number: str) -> None:
    tab = await daemon.connect("alice")
    body = '{"to": ["alice"], "action": {"name": "deploy", "arguments": {"n": %s}}}' % number
    error = invalid(await post_raw(daemon, "/v1/sessions/s1/questions", body.encode()))
    assert error["message"].startswith("request body is not valid JSON"), error
    await nothing_stored(daemon, tab)
