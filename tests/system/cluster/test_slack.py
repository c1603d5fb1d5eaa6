"""With the Redis store, every node makes a question due and applies its
end; exactly one message goes to each recipient, each is edited once, and
an escalation step on another node replies in the first node's thread."""

from __future__ import annotations

from tests.system.cluster.conftest import Cluster
from tests.conftest import QUIET, q
from tests.support.slack_api import FakeSlack, fake_slack, slack_settings  # noqa: F401  (the fixture)

# The ask lets the asking process's own host relay the answer below (protocol section 5).
HOST_KEY = "the-asking-process-own-host-key-0123456789"


async def test_two_nodes_post_once_per_recipient_and_edit_once(cluster: Cluster, fake_slack: FakeSlack) -> None:  # noqa: F811
    a, b = await cluster.start(2, notify=slack_settings(fake_slack))
    assert (await a.admin("PUT", "/admin/v1/users/alice", json={"slack": "U0ALICE"})).status_code == 200
    assert (await b.admin("GET", "/admin/v1/users/alice")).json()["slack"] == "U0ALICE"  # b sees a's write
    assert (await b.admin("PUT", "/admin/v1/users/bob", json={"slack": "U0BOB"})).status_code == 200
    assert (await a.admin("PUT", "/admin/v1/users/carol", json={"slack": "U0CAROL"})).status_code == 200
    r = await b.http.post(
        f"{b.url}/v1/sessions/s1/questions",
        json={
            "to": ["alice", "bob"], "questions": [q("Both?")], "escalate": [{"afterSeconds": 0.5, "to": ["carol"]}], "hostKey": HOST_KEY
        },
        headers=b.agent_headers,
    )
    assert r.status_code == 201, r.text
    rid = r.json()["requestId"]
    posts = await fake_slack.wait_for("chat.postMessage", 3)
    assert sorted(p.args["channel"] for p in posts) == ["C0ASKD", "U0ALICE", "U0BOB"]
    root = next(p for p in posts if p.args["channel"] == "C0ASKD")
    got = await fake_slack.wait_for("chat.postMessage", 5, timeout=8)
    await fake_slack.quiet(QUIET * 2, "chat.postMessage", 5)
    step = got[3:]
    assert sorted(p.args["channel"] for p in step) == ["C0ASKD", "U0CAROL"]
    reply = next(p for p in step if p.args["channel"] == "C0ASKD")
    assert root.answered is not None and reply.args["thread_ts"] == root.answered["ts"]
    r = await a.http.post(
        f"{a.url}/v1/sessions/s1/questions/{rid}/answer", json={"answers": {"Both?": "yes"}, "answeredBy": "bob", "hostKey": HOST_KEY},
        headers=a.agent_headers,
    )
    assert r.status_code == 200, r.text
    updates = await fake_slack.wait_for("chat.update", 5)
    await fake_slack.quiet(QUIET * 2, "chat.update", 5)
    assert sorted((u.args["channel"], u.args["ts"]) for u in updates) == sorted(
        (p.answered["channel"], p.answered["ts"]) for p in got if p.answered
    )
    assert all("*Answered* by *bob*" in u.text for u in updates)
