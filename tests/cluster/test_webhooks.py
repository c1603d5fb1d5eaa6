"""With the Redis store, every node's heap makes a webhook due; exactly one
node sends it."""

from __future__ import annotations

import asyncio

from tests.cluster.conftest import Cluster
from tests.conftest import QUIET, q
from tests.receiver import Receiver, receiver  # noqa: F401  (the fixture)


async def test_three_nodes_send_one_webhook_per_question(cluster: Cluster, receiver: Receiver) -> None:  # noqa: F811
    nodes = await cluster.start(3, notify={"webhook_url": receiver.url})
    asked = [await nodes[i % 3].ask(f"s{i}", "alice", [q(f"Q{i}?")]) for i in range(5)]
    got = await receiver.wait_for(5)
    await asyncio.sleep(QUIET)  # a second copy would come now
    assert sorted(d.json()["requestId"] for d in receiver.got) == sorted(a["requestId"] for a in asked)
    assert len(got) == len(receiver.got) == 5
