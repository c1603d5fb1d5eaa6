"""``askd ask``'s status line: live on a terminal (a real pseudo-terminal
for stderr), erased when the answer comes; absent off a terminal and with
``--json``. The command runs as a real process against the test's daemon."""

from __future__ import annotations

import asyncio
import json
import os
import pty
import re
import subprocess

from tests.cli.test_subprocess import ASKD, RUN_TIMEOUT
from tests.client.waiting import pending_on_daemon
from tests.conftest import RunningDaemon

ERASE_LINE = "\x1b[2K"
CURSOR_UP = "\x1b[1A"
SHOW_CURSOR = "\x1b[?25h"
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def env_for(daemon: RunningDaemon) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ASKD_")}
    env.update(
        ASKD_URL=daemon.url,
        ASKD_AGENT_TOKEN=daemon.token("agent"),
        ASKD_STATE_DIR=os.environ["ASKD_STATE_DIR"],
        COLUMNS="80",  # a terminal's default: the live line must fit it
        TERM="xterm-256color",
    )
    return env


ASK = ["ask", "--user", "alice", "--session", "s1", "--question", "Deploy?", "--option", "yes", "--option", "no"]


async def answer_it(daemon: RunningDaemon) -> str:
    [item] = await pending_on_daemon(daemon)
    r = await daemon.admin(
        "POST", f"/admin/v1/sessions/s1/questions/{item['requestId']}/answer", json={"answers": {"Deploy?": "yes"}}
    )
    assert r.status_code == 200, r.text
    return str(item["requestId"])


async def test_on_a_terminal_a_live_status_line_until_the_answer(daemon: RunningDaemon) -> None:
    master, slave = pty.openpty()
    proc = subprocess.Popen([*ASKD, *ASK], env=env_for(daemon), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=slave)
    os.close(slave)
    seen = bytearray()
    loop = asyncio.get_running_loop()
    arrived = asyncio.Event()

    def on_readable() -> None:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # the child closed its end
            chunk = b""
        if not chunk:
            loop.remove_reader(master)
        seen.extend(chunk)
        arrived.set()

    loop.add_reader(master, on_readable)

    async def screen_shows(pattern: str) -> str:
        while True:
            text = ANSI.sub("", seen.decode("utf-8", "replace"))
            if re.search(pattern, text):
                return text
            arrived.clear()
            await asyncio.wait_for(arrived.wait(), RUN_TIMEOUT)

    try:
        first = await screen_shows(r"Waiting for alice to answer · 14m 5\ds left")
        link_line = f"Answer at {daemon.url}/?session=s1\r\n"
        assert link_line in first  # the link once, on its own line
        assert "Deploy?" in first[: first.index(link_line)]  # what was asked, above the link and the status
        secs = int(re.findall(r"14m (5\d)s left", first)[-1])
        await screen_shows(rf"14m {secs - 1}s left")  # it counts down by itself
        await answer_it(daemon)
        out, _ = await asyncio.to_thread(proc.communicate, timeout=RUN_TIMEOUT)
        assert (proc.returncode, out) == (0, b"yes\n")
        await asyncio.sleep(0.1)  # the last bytes the child wrote to the terminal
        raw = seen.decode("utf-8", "replace")
        # The live line fits 80 columns: never wrapped, so never redrawn with a
        # cursor-up (until the stop, which shows the cursor and erases it).
        assert CURSOR_UP not in raw[: raw.rindex(SHOW_CURSOR)]
        # Cleared: after the last status text comes only the erase, no words.
        tail = raw[raw.rindex("left") :]
        assert ERASE_LINE in tail
        assert ANSI.sub("", tail[tail.index(ERASE_LINE) :]).strip() == ""
    finally:
        loop.remove_reader(master)
        os.close(master)
        if proc.poll() is None:
            proc.kill()
            proc.communicate()


async def test_off_a_terminal_and_with_json_nothing_extra(daemon: RunningDaemon) -> None:
    for extra, expect_out in (([], "yes\n"), (["--json"], None)):
        proc = await asyncio.create_subprocess_exec(
            *ASKD, *ASK, *extra, env=env_for(daemon), stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        rid = await answer_it(daemon)
        out, err = await asyncio.wait_for(proc.communicate(), RUN_TIMEOUT)
        assert proc.returncode == 0 and err == b""
        if expect_out is None:
            assert json.loads(out)["requestId"] == rid
        else:
            assert out.decode() == expect_out
