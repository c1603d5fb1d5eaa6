"""Whole daemons over real sockets, one kind of behaviour per folder. Each
folder's tests carry a mark of its name (registered in pyproject.toml), so
``pytest -m cluster`` runs the cluster's tests wherever they are named from."""

from __future__ import annotations

from pathlib import Path

import pytest

SYSTEM = Path(__file__).parent
KINDS = ("browser", "cluster", "front_door", "fuzz", "links", "restart", "soak", "wire")


@pytest.hookimpl(tryfirst=True)  # before ``-m`` deselects by mark
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if item.path.is_relative_to(SYSTEM):
            kind = item.path.relative_to(SYSTEM).parts[0]
            if kind in KINDS:
                item.add_marker(getattr(pytest.mark, kind))
