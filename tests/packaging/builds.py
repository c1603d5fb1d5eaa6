"""Builds of askd for the packaging tests, made once per test run and never
in the checkout.

With pytest-xdist several workers run at once, each with its own session
fixtures; a build they all need (the wheel: its own tests and the one-file
binary's) is made by the first worker that asks, under a lock in the run's
temporary root, and the others wait for it and reuse it. Builds work on a
copy of the tree: setuptools writes ``askd.egg-info`` and ``build/`` where
it builds, and in the checkout that is the metadata every other worker's
``askd`` reads its version from (``importlib.metadata``, with the checkout
first on ``sys.path``) while it is being rewritten."""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.packaging.roundtrip import ROOT

# What a checkout holds beside its sources: the copy gets a stand-in for
# each, so the sdist check still sees them left out as a clone's would be.
CHECKOUT_ONLY = (".venv", "build", "dist", ".git")


def run_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The temporary root of this run, shared by its xdist workers (each
    worker's basetemp is a folder in it); without workers, the basetemp."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


def once_per_run(tmp_path_factory: pytest.TempPathFactory, name: str, build: Callable[[Path], None]) -> Path:
    """The folder ``name`` in the run's root, filled by ``build`` the first
    time any worker asks. A build that fails leaves no mark of success: the
    next worker to ask builds again, and fails with its own message."""
    root = run_root(tmp_path_factory)
    out, done = root / name, root / f"{name}.done"
    with open(root / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        if not done.exists():
            shutil.rmtree(out, ignore_errors=True)
            out.mkdir()
            build(out)
            done.touch()
    return out


def clean_tree(dest: Path) -> Path:
    """A copy of the checkout as a clone of it would be: the files git tracks
    or would track (untracked ones not ignored), none of what it ignores."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT, capture_output=True, check=True, timeout=60,
    ).stdout.decode().split("\0")
    for name in filter(None, listed):
        source = ROOT / name
        if source.is_file():  # a tracked file deleted in the working tree is not there
            target = dest / name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)
    for folder in CHECKOUT_ONLY:
        (dest / folder).mkdir(exist_ok=True)
        (dest / folder / "stand-in").write_text("not a source file\n")
    return dest
