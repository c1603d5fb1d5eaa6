"""With the Redis store, every node makes a question's mail due; exactly
one mail reaches each recipient, and every node sees the addresses."""

from __future__ import annotations

from tests.system.cluster.conftest import Cluster
from tests.conftest import QUIET, q
from tests.support.mailbox import Mailbox, mailbox  # noqa: F401  (the fixture)


async def test_two_nodes_send_one_mail_per_recipient(cluster: Cluster, mailbox: Mailbox) -> None:
    a, b = await cluster.start(2, notify={"smtp_url": mailbox.url, "email_from": "askd@example.com"})
    assert (await a.admin("PUT", "/admin/v1/users/alice", json={"email": "alice@example.com"})).status_code == 200
    assert (await b.admin("GET", "/admin/v1/users/alice")).json()["email"] == "alice@example.com"  # b sees a's write
    assert (await b.admin("PUT", "/admin/v1/users/bob", json={"email": "bob@example.com"})).status_code == 200
    first = await a.ask("s1", "alice", [q("One?")])
    r = await b.http.post(
        f"{b.url}/v1/sessions/s2/questions", json={"to": ["alice", "bob"], "questions": [q("Two?")]}, headers=b.agent_headers
    )
    assert r.status_code == 201
    got = await mailbox.wait_for(3)
    await mailbox.quiet(QUIET * 2, 3)
    about_one = sorted((m.rcpt_tos[0], "One?" in m.part("plain")) for m in got)
    assert about_one == [("alice@example.com", False), ("alice@example.com", True), ("bob@example.com", False)]
    assert first["requestId"]
