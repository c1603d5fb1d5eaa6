"""The "Ask permission to act, and check the receipt" walk (docs/approvals.md,
linked from the README), run as written (its ``sh`` blocks, in order, in
bash) against a real ``askd serve``: only ``PORT=8765`` becomes the daemon's
port. The outputs the page shows are checked against what the commands print."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

from tests.cli.test_subprocess import RUN_TIMEOUT, Served, served  # noqa: F401 (fixture)

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "approvals.md"


def section_blocks() -> list[str]:
    assert "(docs/approvals.md)" in (ROOT / "README.md").read_text()  # the README links the walk
    return re.findall(r"```sh\n(.*?)```", PAGE.read_text(), flags=re.S)


def test_the_readme_walks_from_curl_to_a_verified_receipt(served: Served, tmp_path: Path) -> None:  # noqa: F811
    blocks = section_blocks()
    assert len(blocks) == 5, blocks
    script = "\n".join(blocks)
    assert "PORT=8765" in script
    script = script.replace("PORT=8765", f"PORT={served.info['port']}")
    env = {**served.env, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{served.env.get('PATH', '')}"}
    run = subprocess.run(
        ["bash", "-eo", "pipefail", "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=RUN_TIMEOUT * 3
    )
    assert run.returncode == 0, run.stderr
    out = run.stdout

    asked = json.loads((tmp_path / "asked.json").read_text())
    rid = asked["requestId"]
    assert "approve deploy (0 of 1)" in out
    assert f"Approved {rid} in session ops: 1 of 1 approvals, it is approved.\n" in out

    result = json.loads((tmp_path / "result.json").read_text())
    assert (result["status"], result["approved"], result["via"], result["scope"]) == ("answered", True, "admin", "once")
    assert result["arguments"] == {"service": "web", "env": "staging"} and result["receipt"]

    claims = json.loads(out[out.index("{\n") : out.index("\n}\n") + 2])
    assert (claims["sid"], claims["rid"], claims["approved"], claims["scope"]) == ("ops", rid, True, "once")
    assert "askd: receipt refused: digest mismatch" in run.stderr
    assert out.endswith("refused: exit 1\n")
