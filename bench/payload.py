"""What the benchmarks send: a realistic question payload (~600 bytes of
JSON, like a coding agent's multiple-choice question) and the bodies built
from it. Shared by the load generator and the floor server so both move
the same bytes."""

from __future__ import annotations

import json
from typing import Any

QUESTIONS: list[dict[str, Any]] = [
    {
        "question": "Which database should the new reporting service use for its event store and its read models?",
        "header": "Database",
        "options": [
            {"label": "PostgreSQL", "description": "Already run in production by the platform team; JSONB columns cover the event payloads."},
            {"label": "SQLite", "description": "One file beside the service; fine below a few writes per second."},
            {"label": "ClickHouse", "description": "Columnar, fast aggregates over billions of rows; a new system to run."},
            {"label": "Keep the current MySQL", "description": "No migration now; revisit once the reports ship."},
        ],
        "multiSelect": False,
    }
]

# The bytes the agent sends as "questions": what "payload size" means below.
QUESTIONS_JSON = json.dumps(QUESTIONS, ensure_ascii=False, separators=(",", ":")).encode()
PAYLOAD_BYTES = len(QUESTIONS_JSON)

ANSWER = {QUESTIONS[0]["question"]: "PostgreSQL"}
ANSWER_JSON = json.dumps(ANSWER, separators=(",", ":")).encode()


def ask_body(user_id: str) -> bytes:
    return b'{"userId":"%s","questions":%s}' % (user_id.encode(), QUESTIONS_JSON)


def answer_frame(session_id: str, request_id: str, frame_id: str) -> bytes:
    return (
        b'{"type":"ask_user_questions_result","sessionId":"%s","requestId":"%s","answers":%s,"id":"%s"}'
        % (session_id.encode(), request_id.encode(), ANSWER_JSON, frame_id.encode())
    )


def subscribe_frame(session_id: str, frame_id: str = "sub") -> bytes:
    return b'{"type":"subscribe","sessionId":"%s","id":"%s"}' % (session_id.encode(), frame_id.encode())
