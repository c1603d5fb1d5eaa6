"""The sdist and the wheel, shared by the wheel's tests and the one-file
binary's (built from that wheel)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.packaging.builds import clean_tree, once_per_run


def build_dists(out: Path) -> None:
    tree = clean_tree(out / "tree")
    proc = subprocess.run(
        [sys.executable, "-m", "build", "--outdir", str(out), str(tree)], capture_output=True, text=True, timeout=600
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]


@pytest.fixture(scope="session")
def dists(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Built with ``python -m build`` once per run, by whichever worker asks first."""
    out = once_per_run(tmp_path_factory, "dists", build_dists)
    (wheel,) = out.glob("askd-*.whl")
    (sdist,) = out.glob("askd-*.tar.gz")
    return {"wheel": wheel, "sdist": sdist}
