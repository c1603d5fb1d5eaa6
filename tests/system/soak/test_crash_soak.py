"""The crash soak, short: ``ASKD_CRASH_SOAK_SECONDS`` (default 20) of load
against an ``askd serve`` that is killed with SIGKILL every 2 to 4 s and
started again. ``python -m tests.system.soak --crash`` runs a longer one and
prints the same figures. 20 s is five or six kills on a quiet machine,
each followed by the full read-back of the ledger; on a loaded one the
load goes on until four kills (a fifth ends the run), the least that
checks every kind of state below through a crash."""

from __future__ import annotations

import os

import pytest

from tests.system.soak.crash import crash_report, crash_soak

pytestmark = pytest.mark.slow
SECONDS = float(os.environ.get("ASKD_CRASH_SOAK_SECONDS", "20"))
KILLS_UNDER_LOAD = 4


async def test_crash_soak_loses_nothing_and_answers_nothing_twice() -> None:
    ledger, errors, code = await crash_soak(SECONDS, min_kills=KILLS_UNDER_LOAD)
    print("\n" + crash_report(ledger, SECONDS))
    f = ledger.figures
    assert ledger.problems == []
    assert f["lost"] == 0 and f["duplicated"] == 0
    assert errors == [], "a daemon logged errors"
    assert code == 0, "the last daemon did not stop cleanly"
    # The run must have exercised what it claims to.
    assert f["kill -9"] >= KILLS_UNDER_LOAD + 1 and f["restarts checked"] == f["kill -9"]
    assert f["asks acknowledged"] > 0 and f["answers accepted"] > 0 and f["second answers refused"] > 0
    assert f["withdraws acknowledged"] > 0 and f["cancels acknowledged"] > 0 and f["deliberate replays"] > 0
    assert f["asks retried through a crash"] > 0 and f["deadline passed while askd was down"] > 0
