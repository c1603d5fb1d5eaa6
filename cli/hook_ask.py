"""``askd hook``'s one approval: asked through ``askd.client``, waited on
through drops and restarts as ``askd ask`` waits, and withdrawn at once
when the agent ends the hook (SIGTERM, SIGINT, SIGHUP)."""

from __future__ import annotations

import signal
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from askd.cli.clients import global_options
from askd.client import Discovery, Result, RetryPolicy
from askd.client.agent import DEFAULT_POLL_SECONDS, new_key
from askd.client.agent_calls import AgentFlows, setup
from askd.client.http import drive_sync

# An askd that cannot be reached to ask at all is given up on within 15 s:
# a 3 s connect, then retries for 6 s more (each try at most 3 s).
ASK_RETRY = RetryPolicy(retry_for=6.0, backoff_cap=1.0)
ASK_CONNECT_SECONDS = 3.0
# Withdrawing as the hook ends: the agent may kill it soon after.
WITHDRAW_RETRY = RetryPolicy(retry_for=3.0, backoff_cap=0.5)
ENDING_SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)


class Ended(BaseException):
    """The agent ended the hook. A BaseException, so that no layer below
    (httpx, the retry loop) mistakes it for a failure to retry."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)


@dataclass
class Target:
    """Where askd is and how to talk to it, as askd commands find it."""

    url: str
    token: Any
    ca_file: Path | None

    @classmethod
    def find(cls, url: str | None, token: str | None, config: Path | None, cacert: Path | None) -> Target:
        g = global_options()
        found = Discovery(config)
        return cls(found.url(url or g.url), found.agent_token(token or g.token), cacert or g.cacert)

    @contextmanager
    def flows(self, retry: RetryPolicy, connect: float | None = None) -> Iterator[tuple[AgentFlows, httpx.Client]]:
        _, flows, http = setup(self.url, self.token, DEFAULT_POLL_SECONDS, retry, self.ca_file)
        if connect is not None:
            http["timeout"] = httpx.Timeout(10.0, read=http["timeout"].read, connect=connect)
        with httpx.Client(**http) as client:
            yield flows, client


def _raise_ended(signum: int, _frame: Any) -> None:
    raise Ended(signum)


@contextmanager
def _ending_signals() -> Iterator[None]:
    before = {s: signal.signal(s, _raise_ended) for s in ENDING_SIGNALS}
    try:
        yield
    finally:
        for s, handler in before.items():
            signal.signal(s, handler)


def ask_approval(target: Target, session: str, body: dict[str, Any]) -> Result | None:
    """The ended approval, or None when the agent ended the hook first (the
    question then withdrawn). Errors of askd.client pass through."""
    key = new_key()
    request_id: str | None = None
    try:
        with _ending_signals():
            with target.flows(ASK_RETRY, ASK_CONNECT_SECONDS) as (flows, client):
                result = drive_sync(client, flows.submit(session, body, key, 0.0))
            request_id = result.request_id
            if not result.pending:
                return result
            with target.flows(RetryPolicy()) as (flows, client):
                return drive_sync(client, flows.wait(session, request_id, None))
    except Ended:
        for s in ENDING_SIGNALS:  # once is enough: withdraw, then go
            signal.signal(s, signal.SIG_IGN)
        _withdraw(target, session, body, key, request_id)
        return None


def _withdraw(target: Target, session: str, body: dict[str, Any], key: str, request_id: str | None) -> None:
    with target.flows(WITHDRAW_RETRY, ASK_CONNECT_SECONDS) as (flows, client):
        if request_id is None:
            # Ended while asking: the same Idempotency-Key finds the question
            # if it was made (or makes it, to be withdrawn at once).
            request_id = drive_sync(client, flows.submit(session, body, key, 0.0)).request_id
        drive_sync(client, flows.withdraw(session, request_id))
