"""A real daemon posting to a local fake of Slack's Web API
(tests/support/slack_api.py) through Slack's own SDK, for the tests that
ask for ``daemon``."""

from __future__ import annotations

from typing import Any

import pytest

from askd.channels.retry import Retry
from tests.conftest import RunningDaemon
from tests.system.links.conftest import PUBLIC_URL
from tests.support.slack_api import FakeSlack, fake_slack, slack_settings  # noqa: F401  (the fixture)


@pytest.fixture
def notify_settings(request: pytest.FixtureRequest) -> dict[str, Any]:
    """Parametrize this name (indirectly) to change the notify section of one test."""
    return dict(getattr(request, "param", {}))


@pytest.fixture
def settings_overrides(fake_slack: FakeSlack, notify_settings: dict[str, Any]) -> dict[str, Any]:
    return {"public_url": PUBLIC_URL, "notify": {**slack_settings(fake_slack), **notify_settings}}


@pytest.fixture(autouse=True)
def fast_retry(request: pytest.FixtureRequest) -> Retry | None:
    """Slack's retries in hundredths of a second, for every test here that
    runs a daemon; the renderer's tests (no daemon) start none."""
    if "daemon" not in request.fixturenames:
        return None
    daemon: RunningDaemon = request.getfixturevalue("daemon")
    assert daemon.daemon.slack is not None
    retry = daemon.daemon.slack.retry = Retry(attempts=4, base=0.02, cap=2.0)
    return retry


async def slack_ids(daemon: RunningDaemon, **ids: str) -> None:
    for user, slack_id in ids.items():
        r = await daemon.admin("PUT", f"/admin/v1/users/{user}", json={"slack": slack_id})
        assert r.status_code == 200, r.text
