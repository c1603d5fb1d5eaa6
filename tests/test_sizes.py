"""askd stays in small modules named for what they hold (issue 31): no
Python file of the installed package (askd/, and config/ installed as
askd.config) over 400 lines, so parts that own different state stay apart."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LIMIT = 400


def test_no_module_over_400_lines() -> None:
    files = [*ROOT.joinpath("askd").rglob("*.py"), *ROOT.joinpath("config").rglob("*.py")]
    sizes = {str(p.relative_to(ROOT)): len(p.read_text(encoding="utf-8").splitlines()) for p in files}
    assert "askd/core/registry.py" in sizes and "config/settings.py" in sizes
    assert {name: n for name, n in sizes.items() if n > LIMIT} == {}
