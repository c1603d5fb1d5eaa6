"""The sdist and the wheel: built from a clean tree with `python -m build`
(which builds the wheel from the sdist, so a file missing from the sdist
is missing from the wheel too), checked for their contents and metadata,
then installed into a fresh venv whose `askd` passes the round trip. They
are built once per test run (tests/packaging/builds.py); the one-file
binary is built from the same wheel."""

from __future__ import annotations

import subprocess
import tarfile
import venv
import zipfile
from email.parser import Parser
from pathlib import Path

import pytest

from tests.packaging.roundtrip import Installed, project_version, round_trip, static_files

pytestmark = [pytest.mark.packaging, pytest.mark.slow]



@pytest.fixture(scope="session")
def fresh_venv(tmp_path_factory: pytest.TempPathFactory, dists: dict[str, Path]) -> Path:
    """A new venv (no system site-packages, nothing of the project venv)
    with only the wheel and the dependencies it declares."""
    env_dir = tmp_path_factory.mktemp("venv")
    venv.EnvBuilder(with_pip=True, clear=True).create(env_dir)
    py = env_dir / "bin" / "python"
    proc = subprocess.run(
        [str(py), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", str(dists["wheel"])],
        capture_output=True, text=True, timeout=600,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return env_dir


def test_wheel_holds_the_package_its_data_and_its_entry_point(dists: dict[str, Path]) -> None:
    with zipfile.ZipFile(dists["wheel"]) as whl:
        names = set(whl.namelist())
        info = f"askd-{project_version()}.dist-info"
        entry_points = whl.read(f"{info}/entry_points.txt").decode()
        meta = Parser().parsestr(whl.read(f"{info}/METADATA").decode())
    for required in ("askd/py.typed", "askd/cli/main.py", "askd/config/settings.py", "askd/server/app.py", "askd/core/registry/registry.py"):
        assert required in names
    for rel in static_files():
        assert f"askd/web/static/{rel}" in names
    assert not any(n.startswith(("tests/", "cli/", "config/")) for n in names)  # mapped into askd.*, nothing loose
    assert "askd = askd.cli.main:main" in entry_points
    assert meta["Version"] == project_version()
    assert meta["Requires-Python"] == ">=3.11"
    assert meta["License-Expression"] == "MIT"
    assert f"{info}/licenses/LICENSE" in names
    assert "Typing :: Typed" in meta.get_all("Classifier")
    assert any(r.startswith("tornado") for r in meta.get_all("Requires-Dist"))


def test_sdist_holds_the_sources_and_the_release_files(dists: dict[str, Path]) -> None:
    top = f"askd-{project_version()}"
    with tarfile.open(dists["sdist"]) as tar:
        names = {n.removeprefix(top + "/") for n in tar.getnames()}
    for required in (
        "pyproject.toml", "README.md", "CHANGELOG.md", "LICENSE", "askd/py.typed", "cli/main.py", "config/settings.py",
        "askd/web/static/index.html", "packaging/askd.service", "packaging/askd.toml", "docs/packaging.md",
    ):
        assert required in names, required
    assert not any(n.startswith((".venv/", "build/", "dist/", ".git/")) for n in names)


def test_installed_wheel_runs_the_round_trip(dists: dict[str, Path], fresh_venv: Path, tmp_path: Path) -> None:
    bin_dir = fresh_venv / "bin"
    # The askd it imports is the wheel's, in the fresh venv, not this tree.
    where = subprocess.run(
        [str(bin_dir / "python"), "-c", "import askd.cli.main, askd; print(askd.__file__)"],
        capture_output=True, text=True, cwd=tmp_path, check=True,
    ).stdout.strip()
    assert Path(where).is_relative_to(fresh_venv), where
    askd = Installed(
        exe=bin_dir / "askd",
        env={"PATH": f"{bin_dir}:/usr/bin:/bin", "HOME": str(tmp_path), "ASKD_STATE_DIR": str(tmp_path / "state")},
        state_dir=tmp_path / "state",
        logs=tmp_path,
    )
    with zipfile.ZipFile(dists["wheel"]) as whl:
        prefix = "askd/web/static/"
        static = {n.removeprefix(prefix): whl.read(n) for n in whl.namelist() if n.startswith(prefix)}
    how = round_trip(askd, static)
    print(how)  # shown with -rP; tells whether the CLI's ask/pending commands were there
