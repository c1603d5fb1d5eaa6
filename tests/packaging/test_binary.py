"""The one-file binary: built once per test run by packaging/build_binary.sh
(what `make binary` runs) from the wheel the wheel's tests check, then run with no Python anywhere on its PATH
and an otherwise empty environment, through the same round trip as the
wheel."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.packaging.roundtrip import ROOT, Installed, round_trip, static_files

pytestmark = [pytest.mark.packaging, pytest.mark.slow]

NO_PYINSTALLER = 3  # build_binary.sh's exit code when PyInstaller cannot be installed


@pytest.fixture(scope="session")
def binary(tmp_path_factory: pytest.TempPathFactory, dists: dict[str, Path]) -> tuple[Path, dict[str, bytes]]:
    """The built executable and the web page's files it was built with."""
    work = tmp_path_factory.mktemp("pyinstaller")
    static = static_files()
    env = {
        **os.environ, "PYTHON": sys.executable, "DIST_DIR": str(work / "dist"), "WORK_DIR": str(work / "work"),
        "WHEEL": str(dists["wheel"]),
    }
    proc = subprocess.run(
        ["bash", str(ROOT / "packaging" / "build_binary.sh")], env=env, capture_output=True, text=True, timeout=900
    )
    if proc.returncode == NO_PYINSTALLER and os.environ.get("CI") != "true":
        pytest.skip("PyInstaller cannot be installed here: " + proc.stderr[-500:])
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    # Moved away from its build tree: the file must stand on its own.
    exe = work / "askd"
    shutil.move(work / "dist" / "askd", exe)
    shutil.rmtree(work / "work")
    return exe, static


def test_binary_runs_the_round_trip_with_no_python(binary: tuple[Path, dict[str, bytes]], tmp_path: Path) -> None:
    exe, static = binary
    env = {"PATH": "/nonexistent", "HOME": str(tmp_path), "ASKD_STATE_DIR": str(tmp_path / "state")}
    assert shutil.which("python3", path=env["PATH"]) is None
    askd = Installed(exe=exe, env=env, state_dir=tmp_path / "state", logs=tmp_path)
    # As the systemd unit runs it: with the example configuration.
    how = round_trip(askd, static, "--config", str(ROOT / "packaging" / "askd.toml"))
    print(how)


def test_binary_reports_bad_config_in_one_line(binary: tuple[Path, dict[str, bytes]], tmp_path: Path) -> None:
    """Config errors still exit 2 with one line naming the setting: the
    frozen settings model validates as the installed one does."""
    proc = subprocess.run(
        [str(binary[0]), "serve", "--port", "0"],
        env={"PATH": "/nonexistent", "HOME": str(tmp_path), "ASKD_STATE_DIR": str(tmp_path / "state"), "ASKD_LIMITS__MAX_QUESTIONS": "0"},
        capture_output=True, text=True, timeout=60,
    )
    assert proc.returncode == 2, proc.stderr
    assert "ASKD_LIMITS__MAX_QUESTIONS" in proc.stderr and len(proc.stderr.strip().splitlines()) == 1
