"""One version, told the same everywhere (issue 30.3): ``pyproject.toml``
holds it; the installed metadata, ``askd --version`` and a real daemon's
``/healthz`` report it; the changelog, docs/protocol.md's "Versions" and the
JavaScript client's compatibility table agree with it."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tomllib
from pathlib import Path

from packaging.version import Version

import askd

ROOT = Path(__file__).resolve().parents[2]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]


def test_the_version_is_a_real_release_line() -> None:
    v = Version(PYPROJECT)
    assert v >= Version("1.2.0"), "askd released 1.2.0 (CHANGELOG.md); main is past it"
    released = [Version(m) for m in re.findall(r"^## \[(\d+\.\d+\.\d+)\]", (ROOT / "CHANGELOG.md").read_text(), re.M)]
    assert released, "CHANGELOG.md names no release"
    # main is the next version in development: above every release the changelog names.
    assert v > max(released), (v, released)


def test_askd_and_its_command_say_the_pyproject_version() -> None:
    assert askd.__version__ == PYPROJECT, "the installed metadata is stale: pip install -e . again"
    out = subprocess.run([sys.executable, "-m", "askd.cli.main", "--version"], capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout == f"askd {PYPROJECT}\n"


async def test_healthz_reports_it(daemon) -> None:  # noqa: ANN001 (the conftest's RunningDaemon)
    r = await daemon.http.get(f"{daemon.admin_url}/healthz")
    assert r.status_code == 200 and r.json()["version"] == PYPROJECT, r.text


def test_protocol_md_says_what_this_version_speaks() -> None:
    doc = (ROOT / "docs" / "protocol.md").read_text()
    rows = re.findall(r"^\| (\d+\.\d+\.[0-9a-z.]+)\b[^|]*\| ([^|]+)\|$", doc, re.M)
    assert any(name == PYPROJECT for name, _ in rows), f"docs/protocol.md's Versions table has no row for askd {PYPROJECT}"
    released = {Version(m) for m in re.findall(r"^## \[(\d+\.\d+\.\d+)\]", (ROOT / "CHANGELOG.md").read_text(), re.M)}
    for v in released:  # each release line the changelog names has its row
        assert any(name == f"{v.major}.{v.minor}.x" for name, _ in rows), f"no row for askd {v.major}.{v.minor}.x"


def test_the_js_client_names_the_askd_it_needs() -> None:
    package = json.loads((ROOT / "clients" / "js" / "package.json").read_text())
    client = Version(package["version"])
    readme = (ROOT / "clients" / "js" / "README.md").read_text()
    row = re.search(rf"^\| {client.major}\.{client.minor}\.x \| (\d+\.\d+\.\d+) or later \|", readme, re.M)
    assert row, f"clients/js/README.md's compatibility table has no row for askd-client {client}"
    needs = Version(row.group(1))
    # The askd it needs exists: released (or this one) and not newer than main.
    assert needs <= Version(PYPROJECT), (needs, PYPROJECT)
    assert f"{client}.tgz" in readme, "the README's install steps name another package file than npm pack writes"
