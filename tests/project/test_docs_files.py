"""docs/architecture.md names only files that exist (issue 31: the map is
true again, and stays true as files move).

A name with a folder (``server/hub/flush.py``) must exist from the
repository's root, from ``askd/`` or from ``askd/server/`` (the doc names
files from those roots); a bare name (``rules.py``) must exist somewhere
in the project's own code.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = ["docs/architecture.md"]
NAMED = re.compile(r"`([\w./-]+\.(?:py|lua|md|ts|js|html|css|toml))`")
ROOTS = [ROOT, ROOT / "askd", ROOT / "askd" / "server", ROOT / "clients" / "js"]
SEARCHED = ["askd", "cli", "config", "clients/js/src", "docs", "bench", "tests"]


def _bare_names() -> set[str]:
    names: set[str] = set()
    for top in SEARCHED:
        names.update(p.name for p in (ROOT / top).rglob("*") if p.is_file() and "node_modules" not in p.parts)
    names.update(p.name for p in ROOT.iterdir() if p.is_file())
    return names


@pytest.mark.parametrize("doc", DOCS)
def test_every_file_the_doc_names_exists(doc: str) -> None:
    text = (ROOT / doc).read_text(encoding="utf-8")
    bare = _bare_names()
    missing = []
    for name in sorted(set(NAMED.findall(text))):
        if "/" in name:
            if not any((base / name).exists() for base in ROOTS):
                missing.append(name)
        elif name not in bare:
            missing.append(name)
    assert not missing, f"{doc} names files that do not exist: {missing}"
