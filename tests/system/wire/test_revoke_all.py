"""``askd token revoke-all`` on one daemon: older tokens refused at once,
their sockets closed with 4001, and (on a store that keeps things) across a
restart; open codes and answer links made before it refused, and agents
waiting with an older token answered 401."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from askd.channels import links
from tests.conftest import SECRET, RunningDaemon, eventually, q, running_daemon
from tests.system.links.conftest import PUBLIC_URL, link, local
from tests.support.open_codes import exchange, new_code, user_of


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


# ---- what revoke-all also ends: open codes, answer links, waits ----------


async def revoke_all(daemon: RunningDaemon) -> float:
    r = await daemon.admin("POST", "/admin/v1/tokens/revoke-all")
    assert r.status_code == 200, r.text
    return float(r.json()["notBefore"])


async def test_an_open_code_made_before_revoke_all_is_refused_after_it(daemon: RunningDaemon) -> None:
    before = new_code("alice")
    await revoke_all(daemon)
    r = await exchange(daemon.http, daemon.url, before)
    assert r.status_code == 401 and "made before its tokens were revoked" in r.json()["error"]["message"], r.text
    assert user_of(await exchange(daemon.http, daemon.url, new_code("alice"))) == "alice"  # made now: good


@pytest.mark.parametrize("settings_overrides", [{"public_url": PUBLIC_URL}])
async def test_answer_links_made_before_revoke_all_are_the_neutral_404(daemon: RunningDaemon, store: str, tmp_path: Path) -> None:
    rid = (await daemon.ask("s1", "alice", [q("Deploy?", "Yes", "No")]))["requestId"]
    old = [link(daemon, "s1", rid, "alice"), link(daemon, "s1", rid, "alice", 0), link(daemon, "s1", rid, None)]
    for url in old:
        assert (await daemon.http.get(url)).status_code == 200
    invalid = (await daemon.http.get(link(daemon, "s1", rid) + "x")).text
    at = await revoke_all(daemon)
    for url in old:
        for r in (await daemon.http.get(url), await daemon.http.post(url, data={"action": "answer"})):
            assert r.status_code == 404 and r.text == invalid, url
    assert (await daemon.result("s1", rid)).json()["status"] == "pending"
    fresh = local(daemon, links.url(PUBLIC_URL, links.mint(SECRET, "s1", rid, "alice", 0, links.epoch_of(at))))
    assert "Confirm" in (await daemon.http.get(fresh)).text  # a link of the new epoch works
    if store == "memory":
        return
    await daemon.daemon.stop()
    async with running_daemon(tmp_path, store, {"public_url": PUBLIC_URL}, None) as again:  # the same state directory
        assert (await again.http.get(again.url + old[1].removeprefix(daemon.url))).status_code == 404
        assert (await again.http.get(again.url + fresh.removeprefix(daemon.url))).status_code == 200


async def test_a_wait_begun_before_revoke_all_ends_with_401(daemon: RunningDaemon) -> None:
    rid = (await daemon.ask("s1", "alice", [q("Deploy?", "Yes", "No")]))["requestId"]
    waiting = asyncio.create_task(daemon.result("s1", rid, wait=30))
    await eventually(lambda: daemon.agent_waiting(rid), what="the agent waiting")
    await revoke_all(daemon)
    r = await asyncio.wait_for(waiting, 5)
    assert r.status_code == 401 and "revoked" in r.json()["error"]["message"], r.text
    assert not daemon.agent_waiting(rid)
    tab = await daemon.connect("alice")  # a token made now: its answer still reaches a new wait
    await tab.subscribe("s1")
    again = asyncio.create_task(daemon.result("s1", rid, wait=30))
    await eventually(lambda: daemon.agent_waiting(rid), what="the new wait")
    assert (await tab.answer("s1", rid, {"Deploy?": "Yes"}))["type"] == "ack"
    r = await asyncio.wait_for(again, 5)
    assert r.status_code == 200 and r.json()["answers"] == {"Deploy?": "Yes"}
