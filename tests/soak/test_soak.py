"""The chaos soak, short: ``ASKD_SOAK_SECONDS`` (default 45) of chaos
against a real ``askd serve`` subprocess. ``python -m tests.soak`` runs a
long one and prints the same figures."""

from __future__ import annotations

import os

from tests.soak.chaos import report, soak

SECONDS = float(os.environ.get("ASKD_SOAK_SECONDS", "45"))
USERS, TABS = 200, 3


async def test_chaos_soak_loses_nothing_and_duplicates_nothing() -> None:
    ledger, errors, code = await soak(SECONDS, users=USERS, tabs=TABS)
    print("\n" + report(ledger, SECONDS, USERS, TABS))
    f = ledger.figures
    assert ledger.problems == []
    assert f["lost"] == 0 and f["duplicated"] == 0
    assert errors == [], "the daemon logged errors"
    assert code == 0, "the daemon did not stop cleanly"
    # The run must have exercised what it claims to.
    assert f["asked"] > 0 and f["answered"] > 0 and f["timeout"] > 0 and f["cancelled"] > 0
    assert f["admin aborts"] > 0 and f["answers resent after reconnect"] > 0
