"""The wire suite runs against each local store, so that ``memory`` does
not rot behind the default."""

from __future__ import annotations

import pytest


@pytest.fixture(params=["sqlite", "memory"])
def store(request: pytest.FixtureRequest) -> str:
    return str(request.param)
