"""docs/notify.md shows a Slack app's message before and after it is
answered: the JSON there is what askd's own renderer makes
(askd.channels.slack.message), so the doc stays true."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from askd.channels.event import event
from askd.channels.slack import message as slack_blocks
from askd.core import Request
from askd.core.lifecycle import Status

DOC = Path(__file__).resolve().parents[3] / "docs" / "notify.md"
LINK = "https://askd.example.com/a/…"  # each link's token left out, as the doc shows it


def example() -> tuple[dict[str, Any], dict[str, Any]]:
    """Alice's direct message about one question, as posted and once she answered."""
    description = {
        "sessionId": "deploy-42",
        "userId": "alice",
        "to": ["alice"],
        "requestId": "5f0c3b9e8a1d4e2f9b7c6a5d4e3f2a1b",
        "questions": [
            {
                "question": "Which database?",
                "header": "Database",
                "options": [{"label": "PostgreSQL", "description": "the team knows it"}, {"label": "SQLite"}],
            }
        ],
        "createdAt": "2026-12-02T10:00:00.000Z",
        "expiresAt": "2026-12-02T10:15:00.000Z",
    }
    ev = event(description, "https://askd.example.com/?session=deploy-42", ["alice"])
    links = {"open": LINK, "options": [{"label": "PostgreSQL", "url": LINK}, {"label": "SQLite", "url": LINK}]}
    before = slack_blocks.question(ev, links)
    req = Request(
        description["requestId"], "deploy-42", "alice", 0.0, 900.0,
        status=Status.ANSWERED, answers={"Which database?": "PostgreSQL"}, answered_by="alice", via="link",
    )
    after = slack_blocks.ended(slack_blocks.kept(before), req)
    return before, after


def doc_json(name: str) -> Any:
    """The JSON block after ``<!-- slack-app: NAME -->`` in docs/notify.md."""
    m = re.search(rf"<!-- slack-app: {name} -->\s*```json\n(.*?)\n```", DOC.read_text(encoding="utf-8"), re.S)
    assert m is not None, f"no {name} message in {DOC}"
    return json.loads(m.group(1))


def test_the_docs_messages_are_what_askd_renders() -> None:
    before, after = example()
    assert doc_json("before") == before
    assert doc_json("after") == after
