"""``make serve`` on a fresh clone: it installs what serving needs (askd
itself, not the test extras) and passes ``ARGS`` to ``askd serve``. Read
with ``make -n``, which prints the commands without running them."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from tests.packaging.builds import clean_tree

ROOT = Path(__file__).resolve().parents[2]


def dry_run(*args: str, venv: Path) -> list[str]:
    if shutil.which("make") is None:
        pytest.skip("no make here")
    done = subprocess.run(
        ["make", "-n", "--no-print-directory", "-C", str(ROOT), f"VENV={venv}", *args], capture_output=True, text=True, timeout=30, check=True
    )
    return done.stdout.splitlines()


def test_serve_installs_askd_without_the_test_extras_and_takes_args(tmp_path: Path) -> None:
    venv = tmp_path / "fresh"  # no venv yet: a fresh clone
    commands = dry_run("serve", "ARGS=--port 9000 --admin-port 9001", venv=venv)
    installs = [c for c in commands if "pip install" in c and "--upgrade pip" not in c]
    # PYTHONWARNINGS: setuptools' notice of its editable import hook (below).
    assert installs == [f'PYTHONWARNINGS="ignore:Editable installation" PIP_DISABLE_PIP_VERSION_CHECK=1 {venv}/bin/pip install --quiet -e .'], commands
    assert commands[-1] == f"{venv}/bin/askd serve --port 9000 --admin-port 9001"


def test_pip_upgrades_itself_only_when_older_than_23(tmp_path: Path) -> None:
    """The pip a fresh venv brings is new enough for askd's install: its
    self-upgrade (a resolver pass and a download) runs only when it is not."""
    venv = tmp_path / "fresh"
    upgrades = [c for c in dry_run("serve", venv=venv) if "--upgrade pip" in c]
    assert len(upgrades) == 1, upgrades
    check, _, upgrade = upgrades[0].partition(" || ")
    assert upgrade == f"{venv}/bin/pip install --quiet --upgrade pip"
    assert check.startswith(f"{venv}/bin/python -c ")
    code = check[len(f"{venv}/bin/python -c "):].strip("'")
    for version, new_enough in (("22.3.1", False), ("23.0", True), ("23.2.1", True), ("26.3", True)):
        done = subprocess.run(
            ["python3", "-c", f"import sys, types; sys.modules['pip'] = types.SimpleNamespace(__version__={version!r})\n{code}"],
            capture_output=True, timeout=30,
        )
        assert (done.returncode == 0) is new_enough, (version, done.stderr)


def test_test_installs_the_test_extras(tmp_path: Path) -> None:
    commands = dry_run("test", venv=tmp_path / "fresh")
    assert any("pip install --quiet -e '.[test]'" in c for c in commands), commands


def test_serve_says_what_it_does_before_the_silent_install(tmp_path: Path) -> None:
    venv = tmp_path / "fresh"
    commands = dry_run("serve", venv=venv)
    install = next(i for i, c in enumerate(commands) if c.endswith("pip install --quiet -e ."))
    said = [c for c in commands[:install] if c.startswith("echo ")]
    assert any(f"Installing askd into {venv} (first run only, 30 s to a minute or two)" in c for c in said), commands


@pytest.mark.packaging
@pytest.mark.slow
def test_the_first_install_prints_no_setuptools_banner(tmp_path: Path) -> None:
    """The real first ``make serve`` install into a fresh venv (slow: pip
    builds askd; its dependencies come from pip's cache or PyPI), in a copy
    of the tree as a clone has it: the editable install writes
    askd.egg-info where it builds, and in this checkout other tests read it."""
    if shutil.which("make") is None:
        pytest.skip("no make here")
    venv = tmp_path / "fresh"
    clone = clean_tree(tmp_path / "clone")
    done = subprocess.run(
        ["make", "--no-print-directory", "-C", str(clone), f"VENV={venv}", f"{venv}/.installed-serve"],
        capture_output=True, text=True, timeout=900,
    )
    out = done.stdout + done.stderr
    assert done.returncode == 0, out
    assert (venv / "bin" / "askd").exists()
    banner = [line for line in out.splitlines() if "BuildBackendWarning" in line or "Please be careful with folders" in line]
    assert banner == [], out
    assert out.index("Installing askd into") < out.index("pip install --quiet -e ."), out
