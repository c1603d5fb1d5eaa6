"""The Python client reads what askd sends through the wire's one
definition: a frame of a known type is checked against its shape, a newer
daemon's type is ignored, and one that does not fit is ignored with a
warning rather than half read."""

from __future__ import annotations

import json
import logging

import pytest

from askd.client import Result, Status
from askd.client.events import QuestionEvent, read_frame

ASK = {
    "type": "ask_user_questions",
    "sessionId": "s1",
    "payload": {
        "requestId": "r1",
        "questions": [{"question": "Deploy?", "x-extra": 1}],
        "metadata": {},
        "createdAt": "2026-12-02T10:00:00.000Z",
        "expiresAt": "2026-12-02T10:15:00.000Z",
        "newField": True,
    },
}


def test_a_known_frame_reads_with_its_shape() -> None:
    read = read_frame(json.dumps(ASK))
    assert read is not None
    sent, frame = read
    event = QuestionEvent.of(frame, sent["payload"])
    assert (event.request_id, event.questions[0].question, event.raw) == ("r1", "Deploy?", ASK["payload"])
    assert QuestionEvent.from_frame(ASK) == event


def test_a_newer_daemons_type_is_nothing_to_do(caplog: pytest.LogCaptureFixture) -> None:
    assert read_frame('{"type": "ask_user_questions_reminded", "payload": {}}') is None
    assert caplog.records == []


@pytest.mark.parametrize("text", ['{"type": "ask_user_questions", "sessionId": "s1", "payload": {}}', "[1]", "{"])
def test_a_frame_that_does_not_fit_is_ignored_with_a_warning(text: str, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, "askd.client"):
        assert read_frame(text) is None
    assert caplog.records


def test_an_ack_reads_absent_keys_as_none() -> None:
    read = read_frame('{"type": "ack", "id": "a1", "payload": {"accepted": true}}')
    assert read is not None and read[1]["payload"]["reason"] is None and read[1]["id"] == "a1"


def test_a_result_reads_through_the_one_definition() -> None:
    result = Result.from_json({"requestId": "r", "sessionId": "s", "status": "declined", "answeredBy": None, "via": "link"})
    assert (result.status, result.answered_by, result.via) == (Status.declined, None, "link")
    assert result.status is Status.DECLINED
    with pytest.raises(ValueError):
        Result.from_json({"requestId": "r", "sessionId": "s", "status": "lost"})
