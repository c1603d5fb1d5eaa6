"""An idle tab's memory (B3, docs/performance.md): the objects Tornado makes
for each connection keep sharing their ``__dict__``'s keys with their class.

CPython shares an instance dict's keys with its class only up to 30 keys;
one more makes each connection's dict a private table five times the size
(1,584 bytes against 296 on Python 3.11). askd adds its own state to the
handler and the stream: this fails when it adds enough to cross the line."""

from __future__ import annotations

from askd.server.app import Daemon
from askd.server.ws.ws import WsHandler
from tests.conftest import RunningDaemon, eventually

SHARED_KEYS_MAX = 30  # CPython's SHARED_KEYS_MAX_SIZE


async def test_an_idle_tabs_handler_and_stream_keep_shared_key_dicts(daemon: RunningDaemon[Daemon]) -> None:
    tab = await daemon.connect("u-mem")
    peers = await eventually(lambda: [p for p in daemon.daemon.ctx.pinger.peers() if isinstance(p, WsHandler)])
    handler = peers[0]
    assert handler.user_id == "u-mem" and handler.conn_id
    stream = handler.ws_connection.stream  # type: ignore[union-attr]
    for obj in (handler, stream):
        keys = list(vars(obj))
        assert len(keys) <= SHARED_KEYS_MAX, f"{type(obj).__name__} has {len(keys)} attributes: {keys}"
    await tab.close()
