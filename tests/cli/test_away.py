"""``askd user away|back`` (spec R) against a live daemon, through the admin API."""

from __future__ import annotations

import json
from datetime import datetime, timezone

from askd.cli.users import until_rfc3339
from tests.cli.test_commands import askd, local, one_error_line  # noqa: F401  (local: the fixture)
from tests.conftest import RunningDaemon

FAR = "2099-12-24"


def test_a_bare_date_is_midnight_utc_and_a_full_time_passes_as_is() -> None:
    assert until_rfc3339("2099-12-24") == "2099-12-24T00:00:00Z"
    assert until_rfc3339("2099-12-24T09:30:00+02:00") == "2099-12-24T09:30:00+02:00"


async def test_user_away_and_back(local: RunningDaemon) -> None:  # noqa: F811
    await local.admin("PUT", "/admin/v1/groups/ops", json={"members": ["dave"]})
    r = await askd("user", "away", "alice", "--until", FAR, "--to", "bob", "--to", "group:ops", "--json")
    assert r.exit_code == 0, r.stderr
    record = json.loads(r.stdout)
    assert (record["user"], record["delegates"]) == ("alice", ["bob", "group:ops"])
    at = datetime.fromisoformat(record["until"].replace("Z", "+00:00"))
    assert at == datetime(2099, 12, 24, tzinfo=timezone.utc)
    assert (await local.admin("GET", "/admin/v1/users/alice")).json()["away"] == record
    r = await askd("user", "show", "alice")
    assert r.exit_code == 0 and "away until 2099-12-24T00:00:00" in r.stdout and "bob, group:ops" in r.stdout
    r = await askd("user", "away", "alice", "--until", FAR, "--to", "carol")
    assert r.exit_code == 0 and r.stdout.startswith("User alice is away until 2099-12-24T00:00:00") and "carol" in r.stdout
    r = await askd("user", "back", "alice")
    assert (r.exit_code, r.stdout) == (0, "User alice is back.\n")
    assert "away" not in (await local.admin("GET", "/admin/v1/users/alice")).json()
    line = one_error_line(await askd("user", "back", "alice"))
    assert "404" in line
    r = await askd("user", "back", "alice", "--json")
    assert r.exit_code == 1


async def test_bad_aways_are_one_line(local: RunningDaemon) -> None:  # noqa: F811
    line = one_error_line(await askd("user", "away", "alice", "--until", "soon", "--to", "bob"), code=2)
    assert "--until" in line
    line = one_error_line(await askd("user", "away", "alice", "--until", "2099-01-01T00:00:00", "--to", "bob"), code=2)
    assert "offset" in line
    line = one_error_line(await askd("user", "away", "alice", "--until", "2001-01-01", "--to", "bob"))
    assert "400 invalid_request" in line and "until" in line
    line = one_error_line(await askd("user", "away", "alice", "--until", FAR, "--to", "alice"))
    assert "400 invalid_request" in line and "delegate" in line
    r = await askd("user", "away", "alice", "--until", FAR)
    assert r.exit_code == 2  # --to is required
