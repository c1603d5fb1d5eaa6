"""A store reads and writes what it keeps; only the core restores it and
only the hub applies: no module of askd/store imports the registry
(issue 31)."""

from __future__ import annotations

from pathlib import Path

from tests.project.test_layout import import_graph

STORE = Path(__file__).resolve().parents[2] / "askd" / "store"


def test_no_store_module_imports_the_registry() -> None:
    graph = import_graph()
    stores = {name: deps for name, deps in graph.items() if name == "askd.store" or name.startswith("askd.store.")}
    assert len(stores) > 10
    assert {name for name, deps in stores.items() if "askd.core.registry" in deps} == set()


def test_no_store_file_is_over_400_lines() -> None:
    long = {p.name: n for p in STORE.rglob("*.py") if (n := len(p.read_text(encoding="utf-8").splitlines())) > 400}
    assert long == {}
