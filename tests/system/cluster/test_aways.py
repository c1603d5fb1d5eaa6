"""Spec R on several nodes sharing Redis: an away set on one node moves the
question on every node, its end at ``until`` is taken once, and a node
started later loads it."""

from __future__ import annotations

import time
from datetime import datetime, timezone

from askd.core.changes import AwayEnded
from tests.system.cluster.conftest import Cluster
from tests.conftest import eventually


def rfc3339(at: float) -> str:
    return datetime.fromtimestamp(at, timezone.utc).isoformat().replace("+00:00", "Z")


async def test_an_away_on_one_node_holds_on_every_node_and_ends_once(cluster: Cluster) -> None:
    a, b, c = await cluster.start(3)
    ended: list[AwayEnded] = []
    for n in (a, b, c):
        commit = n.daemon.hub.store.commit

        async def spy(changes, commit=commit):  # type: ignore[no-untyped-def]
            done = await commit(changes)
            ended.extend(x for x in done if isinstance(x, AwayEnded))
            return done

        n.daemon.hub.store.commit = spy  # type: ignore[method-assign]
    bob = await b.connect("bob")
    rid = (await c.ask("s1", "alice"))["requestId"]
    await bob.quiet()
    until = time.time() + 1.5
    r = await a.admin("PUT", "/admin/v1/users/alice/away", json={"until": rfc3339(until), "delegates": ["bob"]})
    assert r.status_code == 200, r.text
    assert (await bob.expect("ask_user_questions"))["payload"]["requestId"] == rid
    late = (await cluster.add()).daemon.hub.registry
    away = late.away("alice")
    assert away is not None and away.delegates == ("bob",)
    assert (await bob.expect("ask_user_questions_cancelled", timeout=5))["payload"] == {"requestId": rid, "reason": "reassigned"}
    for n in (a, b, c):
        await eventually(lambda n=n: n.daemon.hub.registry.away("alice") is None, what="every node applied the end")
    await eventually(lambda: late.away("alice") is None, what="the late node too")
    assert len(ended) == 1
    await bob.quiet()
