"""Answer links against a real daemon whose ``public_url`` is a proxy's
(a host and a path prefix): links are made for it, and tests follow them
at the daemon's own listener, as that proxy would forward them."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

import pytest

from askd.channels import links
from tests.conftest import SECRET, RunningDaemon

PUBLIC_URL = "https://askd.example/team/"


@pytest.fixture
def settings_overrides() -> dict[str, Any]:
    return {"public_url": PUBLIC_URL}


def local(daemon: RunningDaemon, url: str) -> str:
    """A link made for ``PUBLIC_URL``, at the daemon's listener (the proxy's prefix taken off)."""
    assert url.startswith(PUBLIC_URL), url
    return daemon.url + "/" + urlsplit(url).path.removeprefix(urlsplit(PUBLIC_URL).path)


def link(daemon: RunningDaemon, session: str, rid: str, user: str | None = "alice", option: int | None = None) -> str:
    """A link as the daemon hands them out, at the daemon's listener."""
    return local(daemon, links.url(PUBLIC_URL, links.mint(SECRET, session, rid, user, option)))


def claim(url: str) -> links.LinkClaim | None:
    """What an answer link in a message says (its token, read with the test secret)."""
    return links.read(SECRET, url.rsplit("/", 1)[1])


@pytest.fixture
def fast_webhook_retry(daemon: RunningDaemon) -> None:
    """Webhook retries in hundredths of a second (a test's receiver may refuse first)."""
    from askd.channels.retry import Retry

    assert daemon.daemon.notifier is not None
    daemon.daemon.notifier.retry = Retry(base=0.02, cap=0.05)
