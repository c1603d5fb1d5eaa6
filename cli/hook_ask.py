"""``askd hook``'s one approval: asked and waited on through drops and
restarts by the agent client's own calls (``askd.client.agent_calls``'
``AgentFlows``, as ``AgentClient.request_approval`` asks), and withdrawn at
once when the agent ends the hook (SIGTERM, SIGINT, SIGHUP).

Every permission prompt starts this command, so it loads the client's HTTP
code and nothing more (tests/hooks/test_imports.py): the action is the one
``hook_event.action`` built, sent as the wire's approval body (protocol
section 17) for the daemon to check, and the results are read unchecked
(``read_result(check=False)``), as the hook acts only on ``approved is True``."""

from __future__ import annotations

import signal
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from askd.cli.root_options import global_options
from askd.client.agent_calls import DEFAULT_POLL_SECONDS, AgentFlows, new_key, setup
from askd.client.discovery import Discovery, TokenSource
from askd.client.errors import DaemonUnavailable
from askd.client.http import RetryPolicy, drive_sync
from askd.client.results import Result

# An askd that cannot be reached to ask at all is given up on within 15 s:
# retries for 7 s, and a timer that cuts a hanging call short at 10 s
# (the interpreter starting takes a second or two of the 15).
ASK_RETRY = RetryPolicy(retry_for=7.0, backoff_cap=1.0)
ASK_GIVE_UP_SECONDS = 10.0
# Withdrawing as the hook ends: the agent may kill it soon after.
WITHDRAW_RETRY = RetryPolicy(retry_for=3.0, backoff_cap=0.5)
ENDING_SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)


class Ended(BaseException):
    """The agent ended the hook. A BaseException, so that no layer below
    (httpx, the retry loop) mistakes it for a failure to retry."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)


class _GaveUp(BaseException):
    """The ask took longer than askd is waited for before it is asked."""


class Agent:
    """``AgentClient``'s calls (its flows, driven as it drives them) over one
    HTTP client, each call with its own retry policy, results read unchecked.
    One client for the ask and the wait: each client costs a TLS context
    (some 20 ms), even for a daemon on plain HTTP."""

    def __init__(self, url: str, token: TokenSource, ca_file: Path | None) -> None:
        self._base, _, http = setup(url, token, DEFAULT_POLL_SECONDS, None, ca_file, check=False)
        self._http = httpx.Client(**http)

    def __enter__(self) -> Agent:
        return self

    def __exit__(self, *exc: object) -> None:
        self._http.close()

    def _flows(self, retry: RetryPolicy) -> AgentFlows:
        return AgentFlows(self._base, DEFAULT_POLL_SECONDS, retry, check=False)

    def submit(self, session: str, body: dict[str, Any], key: str, retry: RetryPolicy) -> Result:
        return drive_sync(self._http, self._flows(retry).submit(session, body, key, 0.0))

    def wait(self, session: str, request_id: str) -> Result:
        return drive_sync(self._http, self._flows(RetryPolicy()).wait(session, request_id, None))

    def withdraw(self, session: str, request_id: str, retry: RetryPolicy) -> Result:
        return drive_sync(self._http, self._flows(retry).withdraw(session, request_id))


@dataclass
class Approval:
    """The approval asked, kept to ask again by the same Idempotency-Key
    (which finds the question instead of a second one)."""

    session: str
    action: dict[str, Any]
    to: list[str]
    timeout: float
    key: str = field(default_factory=new_key)

    def submit(self, agent: Agent, retry: RetryPolicy) -> Result:
        body = {"action": self.action, "to": self.to, "timeoutSeconds": self.timeout}
        return agent.submit(self.session, body, self.key, retry)


@dataclass
class Target:
    """Where askd is and how to talk to it, as askd commands find it."""

    url: str
    token: TokenSource
    ca_file: Path | None

    @classmethod
    def find(cls, url: str | None, token: str | None, config: Path | None, cacert: Path | None) -> Target:
        g = global_options()
        found = Discovery(config)
        return cls(found.url(url or g.url), found.agent_token(token or g.token), cacert or g.cacert)

    def client(self) -> Agent:
        return Agent(self.url, self.token, self.ca_file)


def _raise_ended(signum: int, _frame: Any) -> None:
    raise Ended(signum)


def _raise_gave_up(_signum: int, _frame: Any) -> None:
    raise _GaveUp


@contextmanager
def _ending_signals() -> Iterator[None]:
    before = {s: signal.signal(s, _raise_ended) for s in ENDING_SIGNALS}
    try:
        yield
    finally:
        for s, handler in before.items():
            signal.signal(s, handler)


@contextmanager
def _give_up_after(seconds: float) -> Iterator[None]:
    before = signal.signal(signal.SIGALRM, _raise_gave_up)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, before)


def ask_approval(target: Target, approval: Approval) -> Result | None:
    """The ended approval, or None when the agent ended the hook first (the
    question then withdrawn). Errors of askd.client pass through."""
    request_id: str | None = None
    try:
        with _ending_signals(), target.client() as agent:
            try:
                with _give_up_after(ASK_GIVE_UP_SECONDS):
                    result = approval.submit(agent, ASK_RETRY)
            except _GaveUp:
                raise DaemonUnavailable(target.url, f"no answer in {ASK_GIVE_UP_SECONDS:g} s") from None
            request_id = result.request_id
            if not result.pending:
                return result
            return agent.wait(approval.session, request_id)
    except Ended:
        for s in ENDING_SIGNALS:  # once is enough: withdraw, then go
            signal.signal(s, signal.SIG_IGN)
        _withdraw(target, approval, request_id)
        return None


def _withdraw(target: Target, approval: Approval, request_id: str | None) -> None:
    with target.client() as agent:  # a new one: the signal may have cut the other mid-call
        if request_id is None:
            # Ended while asking: the same key finds the question if it was
            # made (or makes it, to be withdrawn at once).
            request_id = approval.submit(agent, WITHDRAW_RETRY).request_id
        agent.withdraw(approval.session, request_id, WITHDRAW_RETRY)
