"""``askd hook``'s one approval: asked with ``AgentClient.request_approval``,
waited on through drops and restarts as ``askd ask`` waits, and withdrawn
at once when the agent ends the hook (SIGTERM, SIGINT, SIGHUP)."""

from __future__ import annotations

import signal
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from askd.cli.clients import global_options
from askd.client import AgentClient, DaemonUnavailable, Discovery, Result, RetryPolicy
from askd.client.agent import new_key

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


@dataclass
class Approval:
    """What ``request_approval`` is given, kept to ask again by the same
    Idempotency-Key (which finds the question instead of a second one)."""

    session: str
    action: dict[str, Any]
    to: list[str]
    timeout: float
    key: str = field(default_factory=new_key)

    def submit(self, agent: AgentClient) -> Result:
        a = self.action
        return agent.request_approval(
            self.session, a["name"], a["arguments"], summary=a.get("summary"), preview=a.get("preview"),
            allow_always=bool(a.get("allowAlways")), to=self.to, timeout=self.timeout,
            idempotency_key=self.key, wait=False,
        )


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

    def client(self, retry: RetryPolicy | None = None) -> AgentClient:
        return AgentClient(self.url, self.token, retry=retry, ca_file=self.ca_file)


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
        with _ending_signals():
            try:
                with _give_up_after(ASK_GIVE_UP_SECONDS), target.client(ASK_RETRY) as agent:
                    result = approval.submit(agent)
            except _GaveUp:
                raise DaemonUnavailable(target.url, f"no answer in {ASK_GIVE_UP_SECONDS:g} s") from None
            request_id = result.request_id
            if not result.pending:
                return result
            with target.client() as agent:
                return agent.wait(approval.session, request_id)
    except Ended:
        for s in ENDING_SIGNALS:  # once is enough: withdraw, then go
            signal.signal(s, signal.SIG_IGN)
        _withdraw(target, approval, request_id)
        return None


def _withdraw(target: Target, approval: Approval, request_id: str | None) -> None:
    with target.client(WITHDRAW_RETRY) as agent:
        if request_id is None:
            # Ended while asking: the same key finds the question if it was
            # made (or makes it, to be withdrawn at once).
            request_id = approval.submit(agent).request_id
        agent.withdraw(approval.session, request_id)
