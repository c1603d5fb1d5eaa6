"""The JavaScript client's generated files are what the repository's
sources make now: its schema is ``askd schema``, its types are that schema
through json-schema-to-typescript, and the page's copy under
askd/web/static/vendor is its build. ``make js-types`` regenerates all three."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from typer.testing import CliRunner

from askd.cli.main import app

ROOT = Path(__file__).resolve().parents[2]
JS = ROOT / "clients" / "js"
VENDOR = ROOT / "askd" / "web" / "static" / "vendor" / "askd-client"
# Modules of the package the page never loads, left out of its copy (the
# Makefile's JS_NOT_VENDORED): the AI SDK adapter imports the `ai` package.
NOT_VENDORED = {"ai-sdk.js"}
REGENERATE = "out of date: run `make js-types` and commit the result"


def askd_schema() -> str:
    result = CliRunner().invoke(app, ["schema"])
    assert result.exit_code == 0, result.output
    return result.output


@pytest.fixture(scope="module")
def node_modules() -> Path:
    """clients/js's installed dev tools (``npm ci``, which ``make test`` runs first)."""
    node, modules = shutil.which("node"), JS / "node_modules"
    if node is None or not (modules / ".bin" / "tsc").exists():
        why = "needs node and `npm ci` in clients/js (make test-js)"
        if os.environ.get("CI") == "true":
            pytest.fail(why)
        pytest.skip(why)
    return modules


def test_the_committed_schema_is_askd_schema() -> None:
    assert (JS / "schema" / "askd.schema.json").read_text() == askd_schema(), REGENERATE


def test_the_committed_types_are_generated_from_askd_schema(node_modules: Path) -> None:
    generated = subprocess.run(
        ["node", "scripts/types.mjs"], cwd=JS, input=askd_schema(), capture_output=True, text=True, check=True, timeout=120
    ).stdout
    assert (JS / "src" / "protocol.ts").read_text() == generated, REGENERATE


def test_the_pages_copy_is_the_build_of_the_source(node_modules: Path, tmp_path: Path) -> None:
    subprocess.run(
        [str(node_modules / ".bin" / "tsc"), "-p", "tsconfig.json", "--outDir", str(tmp_path)],
        cwd=JS, check=True, capture_output=True, timeout=300,
    )
    built = {p.name: p.read_text() for p in tmp_path.glob("*.js") if p.name not in NOT_VENDORED}
    vendored = {p.name: p.read_text() for p in VENDOR.glob("*.js")}
    assert built, "tsc built nothing"
    assert vendored == built, REGENERATE
    assert (VENDOR / "LICENSE").read_text() == (ROOT / "LICENSE").read_text()
