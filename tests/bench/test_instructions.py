"""bench/instructions.py's rounds run (in process, without valgrind, which
counts them: docs/performance.md), so the harness cannot rot silently."""

from __future__ import annotations

import pytest

from bench import instructions


@pytest.mark.parametrize("case", instructions.CASES)
def test_every_case_runs_its_rounds_and_counts_its_calls(case: str) -> None:
    calls = instructions.calls_per_round(case, n=5)
    # a round does the same work each time: an ask and its answer, or a re-push
    # (an answer's receipt digest, RFC 8785 in pure Python, is ~72 of a/b/c's calls)
    assert 20 < calls < 300, calls
