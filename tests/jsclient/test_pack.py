"""The JavaScript client's README, followed as a newcomer would (issue
30.1): its "Installing" commands, run as written in a fresh copy of
``clients/js`` (what a clone has: the files git tracks), make the package
with ``npm pack`` and install it with ``ws`` into a scratch project, where a
script asks a real ``askd serve`` a question through the installed package
and answers it through the same package's inbox."""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from askd import tokens
from tests.support.askd_process import Service

ROOT = Path(__file__).resolve().parents[2]
JS = ROOT / "clients" / "js"
SECRET = "pack-test-secret-0123456789abcdef-0123"

# Through the installed package only ('askd-client', as the README imports it).
SCRIPT = """
import { Agent, Inbox } from 'askd-client';

const [url, agentToken, userToken] = process.argv.slice(2);
const inbox = new Inbox({ url, token: userToken });
const answered = new Promise((resolve, reject) => {
  inbox.on('asked', (q) => inbox.answer(q.requestId, { [q.questions[0].question]: 'Yes' }).then(resolve, reject));
});
inbox.start();
await inbox.ready();
const agent = new Agent({ url, token: agentToken });
const result = agent.ask('pack-test', {
  userId: 'alice',
  questions: [{ question: 'Ship it?', options: [{ label: 'Yes' }, { label: 'No' }] }],
  timeoutSeconds: 60,
});
const verdict = await answered;
console.log(JSON.stringify({ verdict, result: await result }));
inbox.close();
"""


def readme_install_commands() -> list[str]:
    """The shell block of the README's "Installing" section, comments dropped."""
    readme = (JS / "README.md").read_text()
    section = readme.split("\n## Installing\n", 1)[1].split("\n## ", 1)[0]
    block = re.search(r"```sh\n(.*?)```", section, re.S)
    assert block, "clients/js/README.md's Installing section has no sh block"
    return [line.split("#", 1)[0].strip() for line in block.group(1).splitlines() if line.split("#", 1)[0].strip()]


def fresh_copy(home: Path) -> Path:
    """``clients/js`` as a clone has it, at ``~/src/askd/clients/js``: no node_modules, no dist."""
    listed = subprocess.run(["git", "ls-files", "clients/js"], cwd=ROOT, capture_output=True, text=True, check=True).stdout.split()
    assert listed, "git lists no file under clients/js"
    for name in listed:
        target = home / "src" / "askd" / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, target)
    return home / "src" / "askd" / "clients" / "js"


@pytest.fixture
def npm() -> str:
    found = shutil.which("npm")
    if found is None or shutil.which("node") is None:
        if os.environ.get("CI") == "true":
            pytest.fail("needs node and npm (.ci/run installs them)")
        pytest.skip("needs node and npm")
    return found


async def test_the_readme_installs_a_package_that_asks_and_answers(tmp_path: Path, npm: str) -> None:
    home = tmp_path / "home"
    copy = fresh_copy(home)
    project = home / "my-project"
    project.mkdir()
    (project / "package.json").write_text('{"name": "my-project", "version": "1.0.0", "private": true}\n')
    version = json.loads((JS / "package.json").read_text())["version"]

    commands = readme_install_commands()
    assert any(c == "npm pack" or c.startswith("npm pack ") for c in commands), commands
    assert any(f"askd-client-{version}.tgz" in c for c in commands), "the README installs another file than npm pack makes"
    # The README's own words, run in a shell whose home is the scratch one;
    # npm keeps using this machine's cache (and, without it, the registry).
    env = {**os.environ, "HOME": str(home), "npm_config_cache": os.environ.get("npm_config_cache") or str(Path.home() / ".npm")}
    env.update(npm_config_audit="false", npm_config_fund="false", npm_config_update_notifier="false")
    script = "set -eu\n" + "\n".join(commands) + "\n"
    done = subprocess.run(["bash", "-c", script], env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    assert (copy / f"askd-client-{version}.tgz").exists()
    installed = json.loads((project / "node_modules" / "askd-client" / "package.json").read_text())
    assert installed["version"] == version
    assert (project / "node_modules" / "askd-client" / "dist" / "index.js").exists()
    assert not (project / "node_modules" / "askd-client" / "src").exists()  # the build only

    (project / "ask.mjs").write_text(SCRIPT)
    service = Service(tmp_path / "state", env={"ASKD_AUTH__SECRET": SECRET})
    await service.start()
    try:
        agent, user = tokens.issue(SECRET, "agent"), tokens.issue(SECRET, "user", "alice")
        proc = await asyncio.create_subprocess_exec(
            "node", "ask.mjs", service.url, agent, user, cwd=project,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        )
        out, err = await asyncio.wait_for(proc.communicate(), 60)
    finally:
        await service.close()
    assert proc.returncode == 0, err.decode()
    got = json.loads(out.decode().strip().splitlines()[-1])
    assert got["verdict"] == {"accepted": True}
    assert got["result"]["status"] == "answered" and got["result"]["answers"] == {"Ship it?": "Yes"}
