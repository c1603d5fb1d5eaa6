"""B6, Redis round trips per operation: one user's tab on node
``tab_port(0)``, its agent on node ``agent_port(0)`` (another node when
there are two or more). ``count`` asks one after the other, each waiting
for its reply and for the push at the tab; then ``count`` answers from the
tab, each waiting for its ack. Counted per operation: what every node sent
Redis (``Cluster.monitor``) and every command Redis ran (``INFO
commandstats``, a script's commands included).

The hot path of an operation is what the node handling it (the agent's node
for an ask, the tab's node for an answer) waits for before it replies and
pushes: its commit (one EVALSHA of the commit script) and its follower's
XREAD bringing the change back from the stream. That XREAD was sent before
the operation and blocks in Redis until the entry arrives, so it adds
Redis's push, not a request; it is counted anyway."""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from typing import Any

from bench.cluster import Cluster
from bench.payload import answer_frame, ask_body
from bench.wire import HttpClient, WsClient, http_connect, ws_connect

WARMUP = 20  # asks and answers before counting: the script loaded, the pools filled
HOT = ("evalsha commit", "xread")


async def _ask(cluster: Cluster, http: HttpClient, tab: WsClient, sid: str, user: str) -> str:
    reply = http.request("POST", f"/v1/sessions/{sid}/questions", cluster.agent_auth, ask_body(user))
    while True:
        frame = await tab.recv()
        if frame.startswith(b'{"type":"ask_user_questions",'):
            event = json.loads(frame)
            if event["sessionId"] == sid:
                break
    status, body = await reply
    if status != 201:
        raise RuntimeError(f"ask {sid} got HTTP {status}: {body[:300]!r}")
    return str(event["payload"]["requestId"])


async def _answer(tab: WsClient, sid: str, rid: str) -> None:
    tab.send(answer_frame(sid, rid, sid))
    while True:  # skip the cancelled events of earlier answers
        frame = await tab.recv()
        if frame.startswith(b'{"type":"ack"'):
            ack = json.loads(frame)
            if ack["id"] == sid:
                if not ack.get("payload", {}).get("accepted"):
                    raise RuntimeError(f"answer to {sid} refused: {frame[:300]!r}")
                return


def _per_op(count: int, handler: str, sent: Counter[tuple[str, str]], phase: dict[str, Any]) -> dict[str, Any]:
    by_node: dict[str, dict[str, float]] = {}
    for (node, cmd), n in sorted(sent.items()):
        by_node.setdefault(node, {})[cmd] = n / count
    mine = by_node.get(handler, {})
    return {
        "handler": handler,
        "hot_path": sum(mine.get(cmd, 0.0) for cmd in HOT),
        "sent": by_node,  # per node (and "lua": inside scripts), per command, per operation
        "calls": {cmd: n / count for cmd, n in phase["calls"].items()},  # everything Redis ran, per operation
        # CPU per operation (MONITOR running): a node that neither asked nor
        # pushed pays only for following the stream.
        "node_cpu_us": [cpu / count * 1e6 for cpu in phase["node_cpu_s"]],
        "redis_cpu_us": phase["redis_cpu_s"] / count * 1e6,
    }


async def trips(cluster: Cluster, count: int) -> dict[str, Any]:
    user = "u-b6-trips"
    http = await http_connect(cluster.agent_port(0))
    tab = await ws_connect(cluster.tab_port(0), cluster.user_token(user))
    try:
        for i in range(WARMUP):
            sid = f"b6-warm-{i}"
            await _answer(tab, sid, await _ask(cluster, http, tab, sid, user))
        out: dict[str, Any] = {"count": count, "nodes": len(cluster.nodes)}
        sids = [f"b6-trip-{i}" for i in range(count)]
        with cluster.monitor() as sent:
            cpu0 = cluster.begin("b6-asks")
            rids = [await _ask(cluster, http, tab, sid, user) for sid in sids]
            cluster.end(cpu0)
        out["ask"] = _per_op(count, cluster.node_of(cluster.agent_port(0)), sent, cluster.phases["b6-asks"])
        with cluster.monitor() as sent:
            cpu0 = cluster.begin("b6-answers")
            for sid, rid in zip(sids, rids):
                await _answer(tab, sid, rid)
            cluster.end(cpu0)
        out["answer"] = _per_op(count, cluster.node_of(cluster.tab_port(0)), sent, cluster.phases["b6-answers"])
    finally:
        http.close()
        tab.abort()
        await asyncio.sleep(0)  # the sockets close on the loop's next turn, not at a server's stop (its 2 s grace)
    return out
