"""The engine's layout (issue 31): no import circle among askd's modules.

Read from the source with ``ast``, not by importing: an import under
``if TYPE_CHECKING:`` or inside a function is still an edge (a circle hidden
there is a circle all the same, only postponed)."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# Where each package's source lives (pyproject.toml's package-dir).
PACKAGE_DIRS = {"askd": ROOT / "askd", "askd.cli": ROOT / "cli", "askd.config": ROOT / "config"}

# Circles known and not yet removed, each as its sorted module names. Empty
# is the goal: a new entry needs a reason here and an issue to remove it.
KNOWN_CIRCLES: set[tuple[str, ...]] = set()


def modules() -> dict[str, Path]:
    """Every askd module's dotted name and its file."""
    found: dict[str, Path] = {}
    for package, directory in PACKAGE_DIRS.items():
        for path in sorted(directory.rglob("*.py")):
            parts = list(path.relative_to(directory).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join([package, *parts])] = path
    return found


def _imports(name: str, path: Path, known: dict[str, Path]) -> Iterator[str]:
    """The askd modules ``name`` imports, wherever in the file it does."""
    is_package = path.name == "__init__.py"
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                # A package's own module counts as its first level.
                base = name.split(".")[: len(name.split(".")) - node.level + (1 if is_package else 0)]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            # ``from X import Y`` with Y a submodule depends on X.Y, else on X.
            targets = [f"{source}.{a.name}" if f"{source}.{a.name}" in known else source for a in node.names]
        else:
            continue
        for target in targets:
            # ``import askd.core.models as m`` and the like: the longest known prefix.
            while target and target not in known:
                target = target.rpartition(".")[0]
            if target and target != name:
                yield target


def import_graph() -> dict[str, set[str]]:
    known = modules()
    return {name: set(_imports(name, path, known)) for name, path in known.items()}


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Each strongly connected component of more than one module (Tarjan's),
    with one circle through it spelled out."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[set[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph[node]):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = set()
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.add(member)
                if member == node:
                    break
            if len(component) > 1:
                components.append(component)

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return [_one_circle(graph, component) for component in components]


def _one_circle(graph: dict[str, set[str]], component: set[str]) -> list[str]:
    """A path from the component's first module back to itself (breadth-first)."""
    start = min(component)
    came_from: dict[str, str] = {}
    queue = [start]
    while queue:
        node = queue.pop(0)
        for nxt in sorted(graph[node] & component):
            if nxt == start:
                path = [node]
                while path[-1] != start:
                    path.append(came_from[path[-1]])
                return [*reversed(path), start]
            if nxt not in came_from:
                came_from[nxt] = node
                queue.append(nxt)
    raise AssertionError(f"no circle in {component}")


def test_the_graph_sees_every_kind_of_import() -> None:
    graph = import_graph()
    # Absolute, ``from package import submodule``, a TYPE_CHECKING one, cli/ as askd.cli.
    assert "askd.server.http.errors" in graph["askd.server.front_door.auth"]
    assert {"askd.server.front_door.door", "askd.server.logs"} <= graph["askd.server.http.base"]
    assert "askd.core" in graph["askd.channels.links"]  # under ``if TYPE_CHECKING:``
    assert "askd.cli.main" in graph and "askd.config.settings" in graph


def test_relative_imports_resolve(tmp_path: Path) -> None:
    # askd has none today; one added must not slip past the circle check.
    (tmp_path / "__init__.py").write_text("from . import a\nfrom .b import thing\n")
    (tmp_path / "a.py").write_text("from . import b\nfrom .. import other\n")
    (tmp_path / "b.py").write_text("")
    known = {"askd": tmp_path / "../x.py", "askd.pkg": tmp_path / "__init__.py", "askd.pkg.a": tmp_path / "a.py", "askd.pkg.b": tmp_path / "b.py"}
    assert set(_imports("askd.pkg", known["askd.pkg"], known)) == {"askd.pkg.a", "askd.pkg.b"}
    assert set(_imports("askd.pkg.a", known["askd.pkg.a"], known)) == {"askd.pkg.b", "askd"}


def test_the_cycle_finder_finds_a_circle() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert circles(graph) == [["a", "b", "c", "a"]]
    assert circles({"a": {"b"}, "b": set()}) == []


def test_no_import_circle() -> None:
    found = circles(import_graph())
    new = [c for c in found if tuple(sorted(set(c))) not in KNOWN_CIRCLES]
    assert not new, "import circles:\n" + "\n".join(" -> ".join(c) for c in new)
    stale = KNOWN_CIRCLES - {tuple(sorted(set(c))) for c in found}
    assert not stale, f"known circles that no longer exist (remove them from KNOWN_CIRCLES): {stale}"


def _branches_on_store_kind(tree: ast.AST) -> Iterator[int]:
    """Lines comparing ``<x>.store`` (the setting) or ``<store>.kind`` with anything."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            for side in (node.left, *node.comparators):
                if isinstance(side, ast.Attribute) and (
                    side.attr == "kind" or (side.attr == "store" and isinstance(side.value, ast.Name | ast.Attribute))
                ):
                    yield node.lineno


def test_the_daemon_never_branches_on_the_store_kind() -> None:
    # It reads what the store states (durable, shared); the kind is only a name to show.
    found = [
        f"{path.relative_to(ROOT)}:{line}"
        for name, path in modules().items()
        if name.startswith("askd.server")
        for line in _branches_on_store_kind(ast.parse(path.read_text(encoding="utf-8")))
    ]
    assert not found, f"compares the store's kind: {found}"
    # The check itself sees such a comparison.
    assert list(_branches_on_store_kind(ast.parse('if settings.store == "memory": pass')))
    assert list(_branches_on_store_kind(ast.parse('if "redis" != hub.store.kind: pass')))


# Which packages each layer may not reach (docs/architecture.md: imports go
# one way, protocol <- core <- store <- server; the channels and the CLI sit
# beside the server).
FORBIDDEN = {
    "askd.protocol": {"askd.core", "askd.store", "askd.server", "askd.channels", "askd.config", "askd.client", "askd.cli"},
    "askd.core": {"askd.store", "askd.server", "askd.channels", "askd.config", "askd.client", "askd.cli", "askd.mcp"},
    "askd.store": {"askd.server", "askd.channels", "askd.config", "askd.client", "askd.cli", "askd.mcp"},
    # The framework adapters reach the daemon only through askd.client (protocol section 21).
    "askd.integrations": {"askd.core", "askd.store", "askd.server", "askd.channels", "askd.config", "askd.cli", "askd.mcp"},
}


def test_imports_go_one_way() -> None:
    crossings = sorted(
        (name, target)
        for name, targets in import_graph().items()
        for layer, banned in FORBIDDEN.items()
        if name == layer or name.startswith(layer + ".")
        for target in targets
        if any(target == b or target.startswith(b + ".") for b in banned)
    )
    assert crossings == []
