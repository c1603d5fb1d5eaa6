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


# An approval (protocol section 17): a coding agent's "may I run this?",
# with a preview of about the question's size, so the cases move like bytes.
ACTION: dict[str, Any] = {
    "name": "Bash",
    "arguments": {"command": "alembic upgrade head && systemctl restart reporting", "timeout": 120000},
    "summary": "Apply the reporting service's pending migrations, then restart it so the new read models load.",
    "preview": (
        "```bash\nalembic upgrade head && systemctl restart reporting\n```\n"
        "Migrations pending: 0042_event_store_partitions, 0043_read_model_daily_totals, "
        "0044_drop_legacy_report_cache. The service is down for about five seconds while it restarts."
    ),
}
ACTION_JSON = json.dumps(ACTION, ensure_ascii=False, separators=(",", ":")).encode()


def action_body(user_ids: list[str], quorum: int = 1) -> bytes:
    """An approval asked of one user (``userId``) or of several (``to``, with ``quorum``)."""
    if len(user_ids) == 1 and quorum == 1:
        return b'{"userId":"%s","action":%s}' % (user_ids[0].encode(), ACTION_JSON)
    to = json.dumps(user_ids, separators=(",", ":")).encode()
    return b'{"to":%s,"action":%s,"quorum":%d}' % (to, ACTION_JSON, quorum)


def approve_frame(session_id: str, request_id: str, frame_id: str) -> bytes:
    return b'{"type":"approve","sessionId":"%s","requestId":"%s","id":"%s"}' % (
        session_id.encode(), request_id.encode(), frame_id.encode()
    )
