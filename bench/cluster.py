"""B6's server under test: ``n`` askd nodes on one real ``redis-server``,
shaped like :class:`bench.proc.Server` so that B2 and B4 run on it
unchanged. Pair (or user) k's agent talks to node ``k % n`` and its tab to
node ``(k + 1) % n``: with two nodes or more every question crosses nodes.

Redis runs on 127.0.0.1 with the persistence docs/scaling.md recommends for
production (``appendonly yes``, ``appendfsync everysec``). Each measured
phase also records each node's CPU, redis-server's CPU and what Redis ran
(``INFO commandstats``: every command, those a script runs included);
:meth:`Cluster.monitor` tells which node sent which command."""

from __future__ import annotations

import hashlib
import shutil
import tempfile
import threading
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import redis

from askd.store.redis import BEAT, COMMIT, FORGET_NODE
from bench.proc import Server, cpu_seconds
from tests.support.redis_server import RedisServer

# This process's own connection, named so that its commands (INFO, CLIENT
# LIST, the monitor's end marker) are told apart from the nodes'.
BENCH_CLIENT = "bench"
END_MARK = "bench-monitor-end"
# askd's scripts by SHA1, as EVALSHA names them: a commit is not a heartbeat.
SCRIPTS = {hashlib.sha1(text.encode()).hexdigest(): name for name, text in (("commit", COMMIT), ("beat", BEAT), ("forget", FORGET_NODE))}


class Cluster:
    """``n`` nodes ``n1``..``nn``; ``port``, ``admin_port`` and the tokens
    are the first node's (any node takes any call: one secret, one store)."""

    kind = "askd"
    profile_dir: Path | None = None  # py-spy profiles are not taken of a cluster

    def __init__(self, n: int, *, log_level: str = "info", uvloop: bool = False) -> None:
        self.dir = Path(tempfile.mkdtemp(prefix="bench-redis-"))
        self.redis = RedisServer(self.dir, appendonly=True, appendfsync="everysec")
        self.ids = [f"n{i + 1}" for i in range(n)]
        self.nodes: list[Server] = []
        self.phases: dict[str, dict[str, Any]] = {}  # what begin()/end() recorded, by phase
        self.client: redis.Redis | None = None
        try:
            self.redis.start()
            self.client = redis.Redis(port=self.redis.port, client_name=BENCH_CLIENT, protocol=2)
            # Started together (each start is mostly Python's imports). client_name:
            # each node's connections carry its id in CLIENT LIST (for monitor()).
            with ThreadPoolExecutor(n) as pool:
                starts = [
                    pool.submit(Server, "askd", store=f"{self.redis.url}?client_name=askd-{node}", log_level=log_level, uvloop=uvloop,
                                extra_env={"ASKD_NODE_ID": node})
                    for node in self.ids
                ]
            self.nodes = [f.result() for f in starts if f.exception() is None]  # stop() stops these
            failed = [err for f in starts if (err := f.exception()) is not None]
            if failed:
                raise failed[0]
        except BaseException:
            self.stop()
            raise
        first = self.nodes[0]
        self.port, self.admin_port = first.port, first.admin_port
        self.agent_auth, self.admin_auth = first.agent_auth, first.admin_auth

    def agent_port(self, k: int) -> int:
        return self.nodes[k % len(self.nodes)].port

    def tab_port(self, k: int) -> int:
        return self.nodes[(k + 1) % len(self.nodes)].port

    def node_of(self, port: int) -> str:
        return next(node for node, server in zip(self.ids, self.nodes) if server.port == port)

    def user_token(self, user: str) -> str:
        return self.nodes[0].user_token(user)

    def cpu(self) -> float:
        """Every node's CPU seconds (not Redis's: phases record it apart)."""
        return sum(node.cpu() for node in self.nodes)

    def redis_cpu(self) -> float:
        assert self.redis.proc is not None
        return cpu_seconds(self.redis.proc.pid)

    def calls(self) -> Counter[str]:
        """Calls per command since Redis started (``INFO commandstats``)."""
        assert self.client is not None
        stats = self.client.info("commandstats")
        return Counter({key.removeprefix("cmdstat_"): int(v["calls"]) for key, v in stats.items()})

    # A scenario brackets its measured phase with begin()/end(), as on a
    # Server; the cluster records the phase's figures in ``phases``.
    _phase = ""
    _at: tuple[Counter[str], float, list[float]] = (Counter(), 0.0, [])

    def begin(self, phase: str) -> float:
        calls = self.calls()  # first: the INFO call's own CPU falls outside
        self._phase, self._at = phase, (calls, self.redis_cpu(), [node.cpu() for node in self.nodes])
        return sum(self._at[2])

    def end(self, cpu0: float) -> float:
        node_cpu = [node.cpu() - c for node, c in zip(self.nodes, self._at[2])]
        redis_cpu = self.redis_cpu() - self._at[1]
        calls = self.calls() - self._at[0]  # Counter subtraction keeps what grew
        calls.pop("info", None)  # begin()'s own INFO
        self.phases[self._phase] = {"node_cpu_s": node_cpu, "redis_cpu_s": redis_cpu, "calls": dict(sorted(calls.items()))}
        return sum(node_cpu)

    @contextmanager
    def monitor(self) -> Iterator[Counter[tuple[str, str]]]:
        """Count the commands each node sends Redis while the block runs,
        through ``MONITOR``: keys ``(node, command)``, EVALSHA named after
        its script (``evalsha commit``), ``("lua", command)`` for what a
        script runs. MONITOR slows Redis: time nothing inside."""
        assert self.client is not None
        seen: Counter[tuple[str, str]] = Counter()  # (client address, command)
        names = self._client_names()
        conn = self.client.connection_pool.get_connection()
        conn.send_command("MONITOR")
        if conn.read_response() not in (b"OK", "OK"):
            raise RuntimeError("MONITOR refused")

        failed: list[Exception] = []

        def read() -> None:
            try:
                while True:
                    line = conn.read_response()  # b'<time> [<db> <addr>] "<cmd>" "<arg>" ...'
                    who, _, rest = line.partition(b"] ")
                    addr = who.rsplit(b" ", 1)[-1].decode()
                    words = rest.split(b'" "', 2)
                    cmd = words[0].strip(b'"').decode().lower()
                    if cmd == "evalsha" and len(words) > 1:
                        cmd += " " + SCRIPTS.get(words[1].strip(b'"').decode(), "other")
                    if cmd == "echo" and END_MARK.encode() in rest:
                        return
                    seen[(addr, cmd)] += 1
            except Exception as err:  # reported by the caller: no count may go missing silently
                failed.append(err)

        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        tally: Counter[tuple[str, str]] = Counter()
        try:
            yield tally
        finally:
            self.client.echo(END_MARK)  # MONITOR shows commands in order: all before it are read
            reader.join(30)
            conn.disconnect()
            self.client.connection_pool.release(conn)
        if failed or reader.is_alive():
            raise RuntimeError(f"MONITOR reader failed: {failed[0] if failed else 'no end mark within 30 s'}")
        names.update(self._client_names())  # connections made meanwhile too
        for (addr, cmd), count in seen.items():
            node = names.get(addr, "?")
            if node != BENCH_CLIENT:
                tally[(node, cmd)] += count

    def _client_names(self) -> dict[str, str]:
        """Client address -> node id (``lua`` for scripts; ``?`` unnamed)."""
        assert self.client is not None
        out = {"lua": "lua"}
        for c in self.client.client_list():
            name = c.get("name", "")
            out[c["addr"]] = name.removeprefix("askd-") if name else "?"
        return out

    def stop(self) -> None:
        with ThreadPoolExecutor(max(1, len(self.nodes))) as pool:  # together: each may wait out its grace
            list(pool.map(Server.stop, self.nodes))
        if self.client is not None:
            self.client.close()
        self.redis.stop()
        shutil.rmtree(self.dir, ignore_errors=True)  # the AOF grows with every ask

    def __enter__(self) -> Cluster:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop()
