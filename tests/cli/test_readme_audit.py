"""The README's "Export the audit trail and check it" walk, run as written
(its ``sh`` blocks, in order, in bash) against a real ``askd serve`` after
what the walk before it leaves: one question asked, then answered by alice.
The outputs the README shows are checked against what the commands print."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import httpx

from askd import state, tokens
from tests.cli.test_subprocess import RUN_TIMEOUT, Served, served  # noqa: F401 (fixture)

ROOT = Path(__file__).resolve().parents[2]
HEADING = "## Export the audit trail and check it"


def section() -> str:
    text = (ROOT / "README.md").read_text()
    start = text.index(HEADING)
    return text[start : text.index("\n## ", start + len(HEADING))]


def test_the_readme_exports_verifies_and_names_an_edit(served: Served, tmp_path: Path) -> None:  # noqa: F811
    text = section()
    fenced = re.findall(r"^```(\w*)\n(.*?)^```$", text, flags=re.S | re.M)
    blocks = [body for info, body in fenced if info == "sh"]
    shown = [body for info, body in fenced if info == ""]
    assert len(blocks) == 2 and len(shown) == 2, (blocks, shown)
    secret = state.read_secret(served.state_dir)
    assert secret is not None
    agent = {"Authorization": f"Bearer {tokens.issue(secret, 'agent')}"}
    url = f"http://127.0.0.1:{served.info['port']}/v1/sessions/demo/questions"
    key = "the-asking-process-own-host-key-0123456789"  # its own host relays alice's answer (protocol section 5)
    question = {"question": "Which database?", "options": [{"label": "PostgreSQL"}, {"label": "SQLite"}]}
    body = {"userId": "alice", "questions": [question], "hostKey": key}
    rid = httpx.post(url, json=body, headers=agent).json()["requestId"]
    answer = {"answers": {"Which database?": "PostgreSQL"}, "answeredBy": "alice", "hostKey": key}
    r = httpx.post(f"{url}/{rid}/answer", json=answer, headers=agent)
    assert r.status_code == 200, r.text

    env = {**served.env, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{served.env.get('PATH', '')}"}
    for block, out in zip(blocks, shown):
        run = subprocess.run(["bash", "-eo", "pipefail", "-c", block], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=RUN_TIMEOUT)
        assert run.returncode == 0, run.stderr
        assert run.stderr + run.stdout == out, (run.stdout, run.stderr)
    records = [json.loads(line) for line in (tmp_path / "trail.jsonl").read_text().splitlines()]
    assert [(r["event"], r["by"]) for r in records] == [("asked", None), ("answered", "alice")]
    assert json.loads((tmp_path / "head.json").read_text())["seq"] == 2
