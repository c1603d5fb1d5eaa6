"""``askd user set|show`` against a live daemon, through the admin API."""

from __future__ import annotations

import json

import pytest

from tests.cli.test_commands import askd, local, one_error_line  # noqa: F401  (local: the fixture)
from tests.conftest import RunningDaemon


async def test_user_set_show_and_clear(local: RunningDaemon) -> None:  # noqa: F811
    r = await askd("user", "show", "alice")
    assert (r.exit_code, r.stdout) == (0, "User alice: no e-mail address.\n")
    r = await askd("user", "set", "alice", "--email", "alice@example.com")
    assert (r.exit_code, r.stdout) == (0, "User alice: alice@example.com\n")
    assert (await local.admin("GET", "/admin/v1/users/alice")).json()["email"] == "alice@example.com"
    r = await askd("user", "show", "alice", "--json")
    assert json.loads(r.stdout) == {"user": "alice", "email": "alice@example.com", "slack": None}
    r = await askd("user", "set", "alice", "--clear", "--json")
    assert json.loads(r.stdout) == {"user": "alice", "email": None, "slack": None}
    assert (await local.admin("GET", "/admin/v1/users/alice")).json()["email"] is None


@pytest.mark.parametrize("flags", [[], ["--email", "a@example.com", "--clear"]])
async def test_user_set_needs_one_of_email_or_clear(local: RunningDaemon, flags: list[str]) -> None:  # noqa: F811
    line = one_error_line(await askd("user", "set", "alice", *flags), code=2)
    assert line == "askd: give --email ADDRESS or --clear"


async def test_a_bad_address_is_the_daemons_one_line(local: RunningDaemon) -> None:  # noqa: F811
    line = one_error_line(await askd("user", "set", "alice", "--email", "not-an-address"))
    assert "400 invalid_request" in line and "email" in line
    assert (await local.admin("GET", "/admin/v1/users/alice")).json()["email"] is None


async def test_user_set_takes_an_intranet_address(local: RunningDaemon) -> None:  # noqa: F811
    r = await askd("user", "set", "alice", "--email", "alice@corp.local")
    assert (r.exit_code, r.stdout) == (0, "User alice: alice@corp.local\n"), r.stderr
    assert (await local.admin("GET", "/admin/v1/users/alice")).json()["email"] == "alice@corp.local"


async def test_user_set_slack_and_clear_it(local: RunningDaemon) -> None:  # noqa: F811
    r = await askd("user", "set", "alice", "--slack", "U0123ABCD")
    assert (r.exit_code, r.stdout) == (0, "User alice: no e-mail address, Slack U0123ABCD\n"), r.stderr
    r = await askd("user", "set", "alice", "--email", "alice@example.com")
    assert r.stdout == "User alice: alice@example.com, Slack U0123ABCD\n"  # the id stays
    r = await askd("user", "set", "alice", "--clear-slack", "--json")
    assert json.loads(r.stdout) == {"user": "alice", "email": "alice@example.com", "slack": None}
    line = one_error_line(await askd("user", "set", "alice", "--slack", "U1", "--clear-slack"), code=2)
    assert line == "askd: give --slack ID or --clear-slack"
    line = one_error_line(await askd("user", "set", "alice", "--slack", "not-an-id"))
    assert "400 invalid_request" in line and "slack" in line
