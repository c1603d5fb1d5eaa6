"""How an answer reached askd (a result's ``via``) has one definition
(issue 31): the lifecycle's ``Via``, which the wire model uses."""

from __future__ import annotations

from typing import get_args

from askd.core import lifecycle
from askd.core.models import QuestionResult


def test_the_result_model_uses_the_lifecycle_via() -> None:
    assert QuestionResult.model_fields["via"].annotation == lifecycle.Via | None


def test_vias_lists_the_literal() -> None:
    assert lifecycle.VIAS == get_args(lifecycle.Via) == ("ws", "link", "mcp", "admin")
