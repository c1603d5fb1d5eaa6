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
from tests.wire.test_front_door import open_raw, response_then_eof

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
