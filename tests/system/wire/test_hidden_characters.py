"""What may not hide in a name (protocol sections 4 and 17), against a real
daemon: user ids, group names and members, away delegates, option labels
and the ids of WebSocket frames refuse control, bidirectional and
zero-width characters (``400`` with ``loc``, or ``invalid_request``); an
action's name refuses control characters (a line break made its mail
impossible to build); a question's text keeps them, and the agent gets back
exactly what it sent."""

from __future__ import annotations

from typing import Any

import pytest

from tests.conftest import RunningDaemon, q

ZWSP, RLI, PDI = "\u200b", "\u2067", "\u2069"
TROJAN = f"cat README.md {RLI}; echo PWNED #{PDI}"


async def ask(daemon: RunningDaemon, body: dict[str, Any], session: str = "s1") -> Any:
    return await daemon.http.post(f"{daemon.url}/v1/sessions/{session}/questions", json=body, headers=daemon.agent_headers)


def refused_at(r: Any, loc: str) -> str:
    """The message of a ``400 invalid_request`` at ``loc``."""
    assert r.status_code == 400, r.text
    error = r.json()["error"]
    assert error["code"] == "invalid_request", error
    found = [d for d in error.get("details") or () if d["loc"] == loc]
    assert found, error
    return str(found[0]["msg"])


@pytest.mark.parametrize("name", ["rm -rf /tmp/x\r\nBcc: all@example.com", "deploy\n", "a\tb", "x\x1b[31m", "x\x85"])
async def test_an_action_name_with_a_control_character_is_refused(daemon: RunningDaemon, name: str) -> None:
    r = await ask(daemon, {"userId": "alice", "action": {"name": name, "arguments": {}}})
    assert "control character" in refused_at(r, "action.name")


async def test_an_action_name_with_a_bidirectional_control_is_taken_and_kept(daemon: RunningDaemon) -> None:
    # Shown marked wherever askd shows it; the agent reads back what it sent.
    action = {"name": f"Bash{RLI}x{PDI}", "arguments": {"command": TROJAN}, "preview": TROJAN}
    r = await ask(daemon, {"userId": "alice", "action": action})
    assert r.status_code == 201, r.text
    [found] = (await daemon.admin("GET", "/admin/v1/pending")).json()["pending"]
    assert found["action"]["name"] == action["name"] and found["action"]["arguments"] == {"command": TROJAN}


@pytest.mark.parametrize(("label", "kind"), [(f"Yes{ZWSP}", "zero-width"), (f"{RLI}No", "bidirectional"), ("Yes\n", "control")])
async def test_an_option_label_with_a_hidden_character_is_refused(daemon: RunningDaemon, label: str, kind: str) -> None:
    r = await ask(daemon, {"userId": "alice", "questions": [q("Deploy?", "Yes", label)]})
    assert f"{kind} " in refused_at(r, "questions.0.options.1.label")


async def test_a_user_id_with_a_zero_width_character_is_refused(daemon: RunningDaemon) -> None:
    r = await ask(daemon, {"userId": f"alice{ZWSP}", "questions": [q("Deploy?", "Yes", "No")]})
    assert "U+200B" in refused_at(r, "userId")
    r = await ask(daemon, {"to": ["alice", f"group:ops{RLI}"], "questions": [q("Deploy?", "Yes", "No")]})
    refused_at(r, "to.1")


async def test_a_question_with_a_zero_width_character_is_taken_as_sent(daemon: RunningDaemon) -> None:
    text = f"Deploy{ZWSP} to {RLI}prod{PDI}?"
    question = {"question": text, "header": f"Re{ZWSP}lease", "options": [{"label": "Yes", "description": f"ship{ZWSP}"}, {"label": "No"}]}
    tab = await daemon.connect("alice")
    asked = await daemon.ask("s1", "alice", [question])
    pushed = await tab.expect("ask_user_questions")
    assert pushed["payload"]["questions"] == [question]
    ack = await tab.answer("s1", asked["requestId"], {text: "Yes"})
    assert ack["payload"] == {"accepted": True}
    result = (await daemon.result("s1", asked["requestId"])).json()
    assert result["answers"] == {text: "Yes"}


async def test_admin_names_with_hidden_characters_are_refused(daemon: RunningDaemon) -> None:
    r = await daemon.admin("PUT", "/admin/v1/users/alice%E2%80%8B", json={"email": "a@example.com"})
    assert "U+200B" in refused_at(r, "user")
    r = await daemon.admin("PUT", "/admin/v1/groups/ops%E2%81%A7", json={"members": ["alice"]})
    assert "bidirectional" in refused_at(r, "group")
    r = await daemon.admin("PUT", "/admin/v1/groups/ops", json={"members": ["alice", f"bob{ZWSP}"]})
    refused_at(r, "members.1")
    r = await daemon.admin("PUT", "/admin/v1/users/alice/away", json={"until": "2099-01-01T00:00:00Z", "delegates": [f"bob{ZWSP}"]})
    refused_at(r, "delegates.0")
    assert (await daemon.admin("GET", "/admin/v1/groups")).json() == {"groups": []}


async def test_a_frame_naming_a_session_with_a_hidden_character_is_invalid(daemon: RunningDaemon) -> None:
    tab = await daemon.connect("alice")
    await tab.send({"type": "subscribe", "id": 7, "sessionId": f"s1{ZWSP}"})
    reply = await tab.recv()
    assert reply["type"] == "error" and reply["id"] == 7
    assert reply["payload"]["code"] == "invalid_request"
    assert [d["loc"] for d in reply["payload"]["details"]] == ["sessionId"]
    await tab.send({"type": "approve", "id": 8, "sessionId": "s1", "requestId": f"r{RLI}1"})
    reply = await tab.recv()
    assert reply["payload"]["code"] == "invalid_request" and [d["loc"] for d in reply["payload"]["details"]] == ["requestId"]
