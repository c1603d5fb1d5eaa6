"""``/ws`` answers only a WebSocket upgrade: any other method, even with a
valid token, gets askd's JSON ``405`` at once and the connection closed
(it used to get no answer at all: a crash in the error handler)."""

from __future__ import annotations

import asyncio
import json

import pytest

from tests.conftest import RunningDaemon
from tests.system.wire.test_front_door import open_raw, response_then_eof


@pytest.mark.parametrize("method", ["POST", "PUT", "DELETE", "PATCH"])
async def test_a_non_get_on_ws_with_a_valid_token_gets_405_and_is_closed(daemon: RunningDaemon, method: str) -> None:
    port = daemon.daemon.port
    body = b'{"x": 1}'
    reader, writer = await open_raw(port)
    writer.write(
        f"{method} /ws HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: Bearer {daemon.token('user', 'alice')}\r\n"
        f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n".encode()
        + body
    )
    status, answer = await response_then_eof(reader, timeout=3)  # answered, then the connection ends
    writer.close()
    assert status == 405
    error = json.loads(answer)["error"]
    assert error["code"] == "method_not_allowed" and error["message"]


async def test_a_hundred_posts_to_ws_are_all_answered(daemon: RunningDaemon) -> None:
    """The issue's figure: 100 such requests used to stay open past 100 s."""
    token = daemon.token("user", "alice")

    async def one() -> int:
        r = await daemon.http.post(f"{daemon.url}/ws", headers={"Authorization": f"Bearer {token}"}, content=b"{}", timeout=5)
        return r.status_code

    statuses = await asyncio.wait_for(asyncio.gather(*(one() for _ in range(100))), 20)
    assert set(statuses) == {405}
    # The tab's own way in still works.
    tab = await daemon.connect("alice")
    await tab.works()
