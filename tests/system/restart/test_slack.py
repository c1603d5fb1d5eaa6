"""The Slack app across a restart of a real ``askd serve`` on SQLite (spec
R): a message posted is never posted again, and is still edited when its
question ends after the restart; a question that ended while its edit was
on its way (the daemon killed -9, or stopped) has its messages edited once
the daemon is back."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import QUIET, eventually, q
from tests.system.restart import HOW, restart, running
from tests.support.slack_api import HANG, TOKEN, FakeSlack, fake_slack  # noqa: F401  (the fixture)

# The ask lets the asking process's own host relay the answer below (protocol section 5).
HOST_KEY = "the-asking-process-own-host-key-0123456789"


def slack_env(fake: FakeSlack) -> dict[str, str]:
    return {"ASKD_NOTIFY__SLACK_BOT_TOKEN": TOKEN, "ASKD_NOTIFY__SLACK_API_URL": fake.url, "ASKD_NOTIFY__SLACK_CHANNEL": "C0ASKD"}


@pytest.mark.parametrize("how", HOW)
async def test_a_message_posted_before_a_restart_is_edited_after_it(how: str, tmp_path: Path, fake_slack: FakeSlack) -> None:  # noqa: F811
    async with running(tmp_path, **slack_env(fake_slack)) as d:
        assert (await d.admin("PUT", "/admin/v1/users/alice", json={"slack": "U0ALICE"})).status_code == 200
        asked = await d.ask("s1", "alice", [q("Kept?", "Yes", "No")], hostKey=HOST_KEY)
        posts = await fake_slack.wait_for("chat.postMessage", 2)
        # Kept, both (a kill between Slack's answer and the keep loses that message's edit).
        await eventually(lambda: len(d.daemon.processes[-1].named("slack.posted")) == 2, what="both posts kept")
        process = await restart(d.daemon, how)
        await fake_slack.quiet(1.0, "chat.postMessage", 2)  # the restart found the question pending and due: no post again
        r = await d.http.post(
            f"{d.url}/v1/sessions/s1/questions/{asked['requestId']}/answer",
            json={"answers": {"Kept?": "No"}, "answeredBy": "alice", "hostKey": HOST_KEY},
            headers=d.agent_headers,
        )
        assert r.status_code == 200, r.text
        updates = await fake_slack.wait_for("chat.update", 2)
        await fake_slack.quiet(QUIET, "chat.update", 2)
        assert sorted((u.args["channel"], u.args["ts"]) for u in updates) == sorted(
            (p.answered["channel"], p.answered["ts"]) for p in posts if p.answered
        )
        assert all("*Kept?*: No" in u.text and u.buttons == [] for u in updates)
        assert process.named("slack.posted") == [] and len(process.named("slack.updated")) == 2


@pytest.mark.parametrize("how", HOW)
async def test_an_edit_cut_short_by_the_end_of_the_daemon_is_made_at_its_start(how: str, tmp_path: Path, fake_slack: FakeSlack) -> None:  # noqa: F811
    async with running(tmp_path, **slack_env(fake_slack)) as d:
        asked = await d.ask("s1", "alice", [q("Ended?")])
        [post] = await fake_slack.wait_for("chat.postMessage", 1)
        fake_slack.script = [HANG]  # the edit reaches Slack, and no answer comes
        await d.http.delete(f"{d.url}/v1/sessions/s1/questions/{asked['requestId']}", headers=d.agent_headers)
        async with fake_slack.arrived:
            await fake_slack.arrived.wait_for(lambda: len(fake_slack.calls) == 2)
        assert fake_slack.updates == []
        process = await restart(d.daemon, how)
        [update] = await fake_slack.wait_for("chat.update", 1)
        await fake_slack.quiet(QUIET, "chat.update", 1)
        assert post.answered is not None and (update.args["channel"], update.args["ts"]) == (post.answered["channel"], post.answered["ts"])
        assert "*Withdrawn* by the agent." in update.text
        assert process.named("slack.posted") == [] and len(process.named("slack.updated")) == 1
