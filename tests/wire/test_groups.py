"""Spec G over real sockets: groups, and questions asked of a team (``to``)."""

from __future__ import annotations

from tests.conftest import RunningDaemon


async def test_groups_are_set_listed_replaced_and_deleted(daemon: RunningDaemon) -> None:
    r = await daemon.admin("PUT", "/admin/v1/groups/oncall", json={"members": ["bob", "alice", "bob"]})
    assert r.status_code == 200 and r.json() == {"group": "oncall", "members": ["alice", "bob"]}
    await daemon.admin("PUT", "/admin/v1/groups/leads", json={"members": ["carol"]})
    r = await daemon.admin("GET", "/admin/v1/groups")
    assert r.json() == {"groups": [{"group": "leads", "members": ["carol"]}, {"group": "oncall", "members": ["alice", "bob"]}]}

    # PUT replaces the members; an empty team is a team.
    r = await daemon.admin("PUT", "/admin/v1/groups/oncall", json={"members": []})
    assert r.json() == {"group": "oncall", "members": []}
    r = await daemon.admin("DELETE", "/admin/v1/groups/leads")
    assert r.status_code == 200 and r.json() == {"deleted": True}
    r = await daemon.admin("DELETE", "/admin/v1/groups/leads")
    assert r.status_code == 404 and r.json()["error"]["code"] == "not_found"
    assert (await daemon.admin("GET", "/admin/v1/groups")).json() == {"groups": [{"group": "oncall", "members": []}]}


async def test_group_bodies_are_checked_and_need_the_admin_role(daemon: RunningDaemon) -> None:
    for body in ({}, {"members": "alice"}, {"members": [""]}, {"members": ["a\x00"]}, {"members": [], "x": 1}):
        r = await daemon.admin("PUT", "/admin/v1/groups/g", json=body)
        assert r.status_code == 400 and r.json()["error"]["code"] == "invalid_request", body
    r = await daemon.http.put(f"{daemon.admin_url}/admin/v1/groups/g", json={"members": []}, headers=daemon.agent_headers)
    assert r.status_code == 403
    assert (await daemon.admin("GET", "/admin/v1/groups")).json() == {"groups": []}
