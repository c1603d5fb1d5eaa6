"""``askd token revoke-all`` on one daemon: older tokens refused at once,
their sockets closed with 4001, and (on a store that keeps things) across a
restart."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import RunningDaemon, running_daemon


async def test_revoke_all_refuses_older_tokens_and_closes_their_sockets(daemon: RunningDaemon, store: str, tmp_path: Path) -> None:
    old = {"Authorization": f"Bearer {daemon.token('agent')}"}
    tab = await daemon.connect("alice")
    r = await daemon.admin("POST", "/admin/v1/tokens/revoke-all")
    assert r.status_code == 200 and r.json()["notBefore"] > 0
    assert await tab.closed() == 4001
    url = f"{daemon.url}/v1/sessions/s/questions/r"
    assert (await daemon.http.get(url, headers=old)).status_code == 401
    assert (await daemon.http.get(url, headers=daemon.agent_headers)).status_code == 404  # minted now: good
    await (await daemon.connect("alice")).works()
    if store == "memory":
        return
    await daemon.daemon.stop()
    async with running_daemon(tmp_path, store, {}, None) as again:  # the same state directory
        assert (await again.http.get(f"{again.url}/v1/sessions/s/questions/r", headers=old)).status_code == 401
