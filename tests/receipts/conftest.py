"""The receipts' wire tests run against every store, redis as two nodes
(each request to the other node than the one before), as tests/system/wire does."""

from __future__ import annotations

import pytest

from tests.system.wire.conftest import daemon  # noqa: F401  the two-node daemon for store=redis

WIRE_MODULES = {"test_wire", "test_approvals"}


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "store" in metafunc.fixturenames and metafunc.module.__name__.rpartition(".")[2] in WIRE_MODULES:
        metafunc.parametrize("store", ["memory", "sqlite", "redis"])
