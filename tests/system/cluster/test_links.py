"""Answer links on three nodes of one Redis: any node opens a link to a
question asked on another a moment ago, and two taps on two nodes at once
answer it exactly once; revoke-all on one node ends old links, codes and
waits on every node."""

from __future__ import annotations

import asyncio

from askd.channels import links
from tests.system.cluster.conftest import Cluster
from tests.conftest import SECRET, eventually, q
from tests.system.links.conftest import PUBLIC_URL, link, local
from tests.support.open_codes import exchange, new_code


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


async def test_revoke_all_on_one_node_ends_links_codes_and_waits_on_every_node(cluster: Cluster) -> None:
    a, b = await cluster.start(2, public_url=PUBLIC_URL)
    rid = (await a.ask("s1", "alice", [q("Deploy?", "Yes", "No")]))["requestId"]
    old_link, old_code = link(b, "s1", rid, "alice", 0), new_code("alice")
    assert (await b.http.get(old_link)).status_code == 200
    waiting = asyncio.create_task(b.result("s1", rid, wait=30))  # an agent waiting on the other node
    await eventually(lambda: b.agent_waiting(rid), what="the agent waiting on b")
    r = await a.admin("POST", "/admin/v1/tokens/revoke-all")
    assert r.status_code == 200, r.text
    # At once on the other node: it reads the revocation from Redis, not only from the stream.
    assert (await b.http.get(old_link)).status_code == 404
    assert (await b.http.post(old_link, data={"action": "answer"})).status_code == 404
    refused = await exchange(b.http, b.url, old_code)
    assert refused.status_code == 401 and "revoked" in refused.text
    waited = await asyncio.wait_for(waiting, 10)
    assert waited.status_code == 401 and "revoked" in waited.json()["error"]["message"]
    late = await cluster.add(public_url=PUBLIC_URL)  # started afterwards: the epoch is in Redis
    assert (await late.http.get(link(late, "s1", rid, "alice", 0))).status_code == 404
    fresh = links.mint(SECRET, "s1", rid, "alice", 0, links.epoch_of(r.json()["notBefore"]))
    for node in (a, b, late):
        assert (await node.http.get(local(node, links.url(PUBLIC_URL, fresh)))).status_code == 200
    assert (await a.result("s1", rid)).json()["status"] == "pending"
