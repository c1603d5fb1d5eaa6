"""No class in askd hands most of its calls on: at most 5 one-line
forwarders each (docs/architecture.md, the one door). A layer of methods
that only pass a call to a part is a file more to read on every path and a
method more to write for every new operation; where a class needs many, the
part is what its callers mean and they should hold it, or the class should
do the work itself.

A forwarder is a method whose body, a docstring aside, is one statement:
``return self.<part>.<method>(...)``, ``return await ...`` or the call alone,
on an attribute of ``self`` (``self.part.method``, ``self.part.sub.method``).
Read from the source with ``ast``, not by importing."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LIMIT = 5

# Classes known to pass the limit and not yet brought under it, with their
# count. Empty is the goal: an entry here is work still to do.
KNOWN: dict[str, int] = {}


def _is_forwarding_call(node: ast.expr | None) -> bool:
    """``self.<part>(.<attr>)*.<method>(...)``, awaited or not."""
    if isinstance(node, ast.Await):
        node = node.value
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
        return False
    owner = node.func.value  # what the method is called on: a part of self
    if not isinstance(owner, ast.Attribute):
        return False
    while isinstance(owner, ast.Attribute):
        owner = owner.value
    return isinstance(owner, ast.Name) and owner.id == "self"


def is_forwarder(method: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    body = list(method.body)
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) and isinstance(body[0].value.value, str):
        body = body[1:]  # the docstring
    if len(body) != 1:
        return False
    statement = body[0]
    if isinstance(statement, ast.Return | ast.Expr):
        return _is_forwarding_call(statement.value)
    return False


def forwarders(tree: ast.AST) -> Iterator[tuple[str, list[str]]]:
    """Each class of the module with the names of its forwarders."""
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef):
            methods = [m for m in node.body if isinstance(m, ast.FunctionDef | ast.AsyncFunctionDef)]
            yield node.name, [m.name for m in methods if is_forwarder(m)]


def over_the_limit() -> dict[str, int]:
    found: dict[str, int] = {}
    for path in sorted(ROOT.joinpath("askd").rglob("*.py")):
        for name, names in forwarders(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if len(names) > LIMIT:
                found[f"{path.relative_to(ROOT)}:{name}"] = len(names)
    return found


def test_the_check_sees_a_forwarder() -> None:
    source = '''
class Front:
    def a(self, x):
        """Docstring aside."""
        return self.part.a(x)
    async def b(self):
        return await self.part.sub.b()
    def c(self):
        self.part.c()
    def own(self):
        return self._own()           # its own method: not a part
    def works(self, x):
        y = self.part.d(x)
        return y + 1
    def wraps(self):
        return tuple(self.part.e())  # does something with the answer
'''
    assert dict(forwarders(ast.parse(source))) == {"Front": ["a", "b", "c"]}


def test_no_class_has_more_than_five_forwarders() -> None:
    found = over_the_limit()
    stale = {name: n for name, n in KNOWN.items() if found.get(name, 0) < n}
    assert not stale, f"known classes now with fewer forwarders (lower or remove their entry in KNOWN): {stale}"
    found = {name: n for name, n in found.items() if KNOWN.get(name, -1) < n}
    assert found == {}, "classes with more than 5 one-line forwarders (class: count): " + ", ".join(
        f"{name}: {n}" for name, n in sorted(found.items())
    )
