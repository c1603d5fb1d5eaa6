"""The core stays in small modules named for what they hold (issue 31): no
file in askd/core over 400 lines, so the registry's parts stay apart."""

from __future__ import annotations

from pathlib import Path

CORE = Path(__file__).resolve().parents[2] / "askd" / "core"


def test_no_core_module_over_400_lines() -> None:
    sizes = {p.name: len(p.read_text(encoding="utf-8").splitlines()) for p in CORE.glob("*.py")}
    assert "registry.py" in sizes
    assert {name: n for name, n in sizes.items() if n > 400} == {}
