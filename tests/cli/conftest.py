"""The in-process daemon logs through structlog, which writes to whatever
``sys.stdout`` is at the time; Typer's runner swaps that for the command's
output. Bind the daemon's log to the test's stderr instead."""

from __future__ import annotations

import sys
from collections.abc import Iterator

import pytest
import structlog

from askd.server import logs


@pytest.fixture(autouse=True)
def _daemon_logs_apart() -> Iterator[None]:
    logs.configure("info", "console", stream=sys.stderr)
    yield
    structlog.reset_defaults()
