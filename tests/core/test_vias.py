"""How an answer reached askd (a result's ``via``) has one definition
(issue 31): ``askd.protocol.status.Via``, which the lifecycle and the
result's shape use."""

from __future__ import annotations

from typing import get_args, get_type_hints

from askd.core import lifecycle
from askd.protocol import status
from askd.protocol.results import QuestionResult


def test_the_result_model_uses_the_lifecycle_via() -> None:
    assert get_type_hints(QuestionResult)["via"] == lifecycle.Via | None
    assert lifecycle.Via is status.Via


def test_vias_lists_the_literal() -> None:
    assert lifecycle.VIAS == get_args(lifecycle.Via) == ("ws", "link", "mcp", "admin")
