"""With the Redis store, every node's heap makes a webhook due; exactly one
node sends it."""

from __future__ import annotations

import asyncio

from tests.system.cluster.conftest import Cluster
from tests.conftest import QUIET, q
from tests.support.receiver import Receiver, receiver  # noqa: F401  (the fixture)


async def test_three_nodes_send_one_webhook_per_question(cluster: Cluster, receiver: Receiver) -> None:  # noqa: F811
    nodes = await cluster.start(3, notify={"webhook_url": receiver.url})
    asked = [await nodes[i % 3].ask(f"s{i}", "alice", [q(f"Q{i}?")]) for i in range(5)]
    got = await receiver.wait_for(5)
    await asyncio.sleep(QUIET)  # a second copy would come now
    assert sorted(d.json()["requestId"] for d in receiver.got) == sorted(a["requestId"] for a in asked)
    assert len(got) == len(receiver.got) == 5


async def test_only_offline_counts_tabs_on_every_node(cluster: Cluster, receiver: Receiver) -> None:  # noqa: F811
    a, b = await cluster.start(2, notify={"webhook_url": receiver.url, "only_offline": True, "after_seconds": 0.3})
    tab = await b.connect("alice")
    from tests.system.cluster.test_scenarios import _listed
    from tests.conftest import eventually

    await eventually(lambda: _listed(a, "alice"), what="alice's tab in the listing")
    online = await a.ask("s1", "alice", [q("Seen?")])
    await tab.expect("ask_user_questions")
    offline = await a.ask("s2", "bob", [q("Away?")])
    [delivery] = await receiver.wait_for(1)
    await asyncio.sleep(0.3 + QUIET)
    assert [d.json()["requestId"] for d in receiver.got] == [offline["requestId"]]
    assert delivery.json()["requestId"] != online["requestId"]
