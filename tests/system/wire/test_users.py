"""``/admin/v1/users/{U}`` (spec J): a user's e-mail address, set, read,
cleared, checked, and only with the admin role on the admin listener."""

from __future__ import annotations

import pytest

from tests.conftest import RunningDaemon


async def test_set_read_and_clear_an_address(daemon: RunningDaemon) -> None:
    assert (await daemon.admin("GET", "/admin/v1/users/alice")).json() == {"user": "alice", "email": None, "slack": None}
    r = await daemon.admin("PUT", "/admin/v1/users/alice", json={"email": "alice@example.com"})
    assert (r.status_code, r.json()) == (200, {"user": "alice", "email": "alice@example.com", "slack": None})
    assert (await daemon.admin("GET", "/admin/v1/users/alice")).json() == {"user": "alice", "email": "alice@example.com", "slack": None}
    assert (await daemon.admin("GET", "/admin/v1/users/bob")).json() == {"user": "bob", "email": None, "slack": None}
    r = await daemon.admin("PUT", "/admin/v1/users/alice", json={"email": "a.l@example.org"})
    assert r.json()["email"] == "a.l@example.org"  # replaced
    r = await daemon.admin("PUT", "/admin/v1/users/alice", json={"email": None})
    assert (r.status_code, r.json()) == (200, {"user": "alice", "email": None, "slack": None})
    assert (await daemon.admin("GET", "/admin/v1/users/alice")).json() == {"user": "alice", "email": None, "slack": None}


@pytest.mark.parametrize(
    ("given", "kept"),
    [
        ("alice@corp.local", "alice@corp.local"),  # an Active Directory domain
        ("alice@mail.lan", "alice@mail.lan"),
        ("alice@example.test", "alice@example.test"),  # reserved, and an intranet's to use
        ("alice@mailhost", "alice@mailhost"),  # one label
        ("Alice@CORP.Local", "Alice@corp.local"),  # normalized as any other
    ],
)
async def test_an_address_on_an_intranet_domain_is_taken(daemon: RunningDaemon, given: str, kept: str) -> None:
    # askd never resolves a domain: whether it takes mail is the relay's business.
    r = await daemon.admin("PUT", "/admin/v1/users/alice", json={"email": given})
    assert (r.status_code, r.json()) == (200, {"user": "alice", "email": kept, "slack": None}), r.text
    assert (await daemon.admin("GET", "/admin/v1/users/alice")).json()["email"] == kept


async def test_an_id_with_spaces_and_slashes_is_one_user(daemon: RunningDaemon) -> None:
    r = await daemon.admin("PUT", "/admin/v1/users/J%C3%BCrgen%20M%2Fx", json={"email": "j@example.com"})
    assert r.json() == {"user": "Jürgen M/x", "email": "j@example.com", "slack": None}
    assert (await daemon.admin("GET", "/admin/v1/users/J%C3%BCrgen%20M%2Fx")).json()["email"] == "j@example.com"


@pytest.mark.parametrize(
    "body",
    [
        {},
        {"email": "not an address"},
        {"email": "alice@"},
        {"email": "@example.com"},
        {"email": 42},
        {"email": ["a@example.com"]},
        {"email": "a@example.com", "name": "Alice"},
        {"email": "a@example.com\r\nBcc: x@example.com"},
        {"email": "a" * 250 + "@example.com"},
        {"email": "alice@corp..local"},
        {"email": "alice@@corp.local"},
        {"email": "alice@corp.local."},
        {"email": "alice@-corp.local"},
    ],
)
async def test_a_bad_body_is_400_and_changes_nothing(daemon: RunningDaemon, body: dict[str, object]) -> None:
    await daemon.admin("PUT", "/admin/v1/users/alice", json={"email": "alice@example.com"})
    r = await daemon.admin("PUT", "/admin/v1/users/alice", json=body)
    assert r.status_code == 400 and r.json()["error"]["code"] == "invalid_request", r.text
    assert (await daemon.admin("GET", "/admin/v1/users/alice")).json()["email"] == "alice@example.com"


async def test_only_an_admin_token_on_the_admin_listener(daemon: RunningDaemon) -> None:
    path = "/admin/v1/users/alice"
    for role in ("agent", "user"):
        headers = {"Authorization": f"Bearer {daemon.token(role, 'alice')}"}
        r = await daemon.http.put(f"{daemon.admin_url}{path}", json={"email": "evil@example.com"}, headers=headers)
        assert r.status_code == 403, role
        assert (await daemon.http.get(f"{daemon.admin_url}{path}", headers=headers)).status_code == 403
    assert (await daemon.http.get(f"{daemon.admin_url}{path}")).status_code == 401
    r = await daemon.http.get(f"{daemon.url}{path}", headers=daemon.admin_headers)
    assert r.status_code == 404  # not on the public listener
    assert (await daemon.admin("GET", path)).json()["email"] is None


async def test_a_bad_user_id_is_400(daemon: RunningDaemon) -> None:
    r = await daemon.admin("PUT", "/admin/v1/users/a%00b", json={"email": "a@example.com"})
    assert r.status_code == 400 and r.json()["error"]["code"] == "invalid_request"


async def test_a_slack_id_beside_the_address(daemon: RunningDaemon) -> None:
    await daemon.admin("PUT", "/admin/v1/users/alice", json={"email": "alice@example.com"})
    r = await daemon.admin("PUT", "/admin/v1/users/alice", json={"slack": "U0123ABCD"})
    assert (r.status_code, r.json()) == (200, {"user": "alice", "email": "alice@example.com", "slack": "U0123ABCD"})
    r = await daemon.admin("PUT", "/admin/v1/users/alice", json={"email": None})  # the id stays
    assert r.json() == {"user": "alice", "email": None, "slack": "U0123ABCD"}
    r = await daemon.admin("PUT", "/admin/v1/users/alice", json={"email": "a@example.com", "slack": None})
    assert r.json() == {"user": "alice", "email": "a@example.com", "slack": None}
    assert (await daemon.admin("GET", "/admin/v1/users/alice")).json() == r.json()


@pytest.mark.parametrize("slack", ["", "u0123", "C0123ABCD", "U0123 ABCD", "U" + "A" * 40, 42, ["U0123"], "<@U0123>"])
async def test_a_bad_slack_id_is_400_and_changes_nothing(daemon: RunningDaemon, slack: object) -> None:
    await daemon.admin("PUT", "/admin/v1/users/alice", json={"slack": "U0123ABCD"})
    r = await daemon.admin("PUT", "/admin/v1/users/alice", json={"slack": slack})
    assert r.status_code == 400 and r.json()["error"]["code"] == "invalid_request", r.text
    assert (await daemon.admin("GET", "/admin/v1/users/alice")).json()["slack"] == "U0123ABCD"
