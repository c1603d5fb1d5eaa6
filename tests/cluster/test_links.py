"""Answer links on three nodes of one Redis: any node opens a link to a
question asked on another a moment ago, and two taps on two nodes at once
answer it exactly once."""

from __future__ import annotations

import asyncio

from tests.cluster.conftest import Cluster
from tests.conftest import q
from tests.links.conftest import PUBLIC_URL, link


async def test_two_taps_on_two_nodes_answer_once(cluster: Cluster) -> None:
    a, b, c = await cluster.start(3, public_url=PUBLIC_URL)
    await a.admin("PUT", "/admin/v1/groups/ops", json={"members": ["alice", "bob"]})
    r = await a.http.post(
        f"{a.url}/v1/sessions/s1/questions", json={"to": ["group:ops"], "questions": [q("Deploy?", "Yes", "No")]},
        headers=a.agent_headers,
    )
    rid = r.json()["requestId"]
    page = await b.http.get(link(b, "s1", rid, "alice", 0))  # asked on a, opened on b at once
    assert page.status_code == 200 and "Confirm" in page.text
    taps = await asyncio.gather(
        b.http.post(link(b, "s1", rid, "alice", 0), data={"action": "answer"}),
        c.http.post(link(c, "s1", rid, "bob", 1), data={"action": "answer"}),
    )
    assert sorted("your answer was sent" in t.text for t in taps) == [False, True]
    body = (await a.result("s1", rid, wait=5)).json()
    assert body["status"] == "answered" and body["via"] == "link"
    winner = {"alice": {"Deploy?": "Yes"}, "bob": {"Deploy?": "No"}}[body["answeredBy"]]
    assert body["answers"] == winner
    loser = taps[1] if "your answer was sent" in taps[0].text else taps[0]
    assert f"Already answered by {body['answeredBy']}." in loser.text
