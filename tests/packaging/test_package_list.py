"""Every package of askd's source is in pyproject.toml's package list, so the
wheel and the binary ship it (a sub-package left out installs fine and fails
only when the daemon starts: the wheel's round trip found askd.server.hub
missing). Fast: reads the files, builds nothing."""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_every_source_package_is_listed() -> None:
    tool = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]
    listed = set(tool["packages"])
    found = set()
    for package, folder in tool["package-dir"].items():
        for init in (ROOT / folder).rglob("__init__.py"):
            rel = init.parent.relative_to(ROOT / folder).parts
            found.add(".".join((package, *rel)))
    assert "askd.server.hub" in found
    assert sorted(found - listed) == []
