"""Per-user connection cap: refused before the upgrade, and a freed slot is
usable again."""

from __future__ import annotations

import json

import pytest
import websockets

from tests.conftest import RunningDaemon, eventually


@pytest.mark.parametrize("settings_overrides", [{"limits": {"max_connections_per_user": 2}}])
async def test_connections_over_the_per_user_cap_get_429_before_the_upgrade(daemon: RunningDaemon) -> None:
    first = await daemon.connect("alice")
    await daemon.connect("alice")
    other_user = await daemon.connect("bob")  # the cap is per user

    with pytest.raises(websockets.InvalidStatus) as refused:
        await daemon.connect("alice")
    response = refused.value.response
    assert response.status_code == 429
    assert json.loads(response.body)["error"]["code"] == "too_many_connections"

    r = await daemon.admin("GET", "/admin/v1/connections", params={"userId": "alice"})
    assert len(r.json()["connections"]) == 2
    await other_user.send({"type": "ping", "id": 1})
    assert (await other_user.recv()) == {"type": "pong", "id": 1}

    await first.close()
    await eventually(lambda: len(daemon.daemon.hub.registry.connections("alice")) == 1)
    again = await daemon.connect("alice")
    await again.send({"type": "ping"})
    assert (await again.recv())["type"] == "pong"
