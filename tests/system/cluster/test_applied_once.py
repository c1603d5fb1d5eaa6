"""A node's own change comes back to it twice on Redis: through its
follower (the stream, in the cluster's order) and as what its commit
returns. It is applied, and flushed, once: when the follower hands it over
(issue 31)."""

from __future__ import annotations

from typing import Any

from askd.core.changes import Change
from tests.system.cluster.conftest import Cluster
from tests.conftest import q


def count_applies(hub: Any) -> list[tuple[str, str]]:
    """Every change the node's registry is asked to apply, from now on."""
    seen: list[tuple[str, str]] = []
    apply = hub.registry.apply

    def counted(change: Change) -> bool:
        seen.append((type(change).__name__, getattr(change, "request_id", None) or change.request.request_id))  # type: ignore[attr-defined]
        return bool(apply(change))

    hub.registry.apply = counted
    return seen


def count_flushes(hub: Any) -> list[int]:
    """One entry per flush (the flush is the registry's only drainer), with its sends."""
    flushed: list[int] = []
    drain = hub.registry.drain

    def counted() -> Any:
        out = drain()
        flushed.append(len(out.sends))
        return out

    hub.registry.drain = counted
    return flushed


async def test_a_nodes_own_change_is_applied_and_flushed_once(cluster: Cluster) -> None:
    a, b = await cluster.start(2)
    hub_a, hub_b = a.daemon.hub, b.daemon.hub
    tab = await a.connect("alice")
    applied_a, applied_b = count_applies(hub_a), count_applies(hub_b)
    flushes_a = count_flushes(hub_a)

    rid = (await a.ask("s1", "alice", [q("Ship it?", "yes", "no")]))["requestId"]
    await tab.expect("ask_user_questions")
    assert applied_a == [("Asked", rid)]  # the follower's; the commit's return applies nothing more
    assert flushes_a == [1]  # one flush, which sent the question to the tab

    ack = await tab.answer("s1", rid, {"Ship it?": "yes"})
    assert ack["payload"] == {"accepted": True}
    await tab.expect("ask_user_questions_cancelled")
    assert applied_a == [("Asked", rid), ("Ended", rid)]
    assert flushes_a == [1, 1]
    # The other node follows the same stream: each change once there too.
    assert (await b.result("s1", rid)).json()["status"] == "answered"
    assert applied_b == [("Asked", rid), ("Ended", rid)]
