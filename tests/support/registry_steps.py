"""One-step registry events for tests with no store: prepare and apply at
once. The daemon never does this (its hub commits each change to the store
between the two), so these live with the tests, not in the core."""

from __future__ import annotations

from typing import Any

from askd.core import AskInput, Request
from askd.core.registry import Registry


class StepRegistry(Registry):
    def ask(self, session_id: str, user_id: str, questions: list[dict[str, Any]], **kw: Any) -> tuple[Request, bool]:
        """Ask; returns the request and whether it is new (an
        Idempotency-Key replay is not)."""
        req, change = self.prepare_ask(AskInput(session_id, user_id, questions, **kw))
        if change is not None:
            self.apply(change)
        return req, change is not None

    def answer(self, session_id: str, request_id: str, answers: Any, *, user_id: str | None = None) -> Request:
        self.apply(self.prepare_answer(session_id, request_id, answers, user_id=user_id))
        req = self.get(session_id, request_id)
        assert req is not None
        return req

    def withdraw(self, session_id: str, request_id: str, agent: str | None = None) -> Request | None:
        req, change = self.prepare_withdraw(session_id, request_id, agent)
        if change is not None:
            self.apply(change)
        return req

    def cancel_session(self, session_id: str, agent: str | None = None) -> int:
        """How many questions the cancel ended."""
        return sum(self.apply(c) for c in self.prepare_cancel(session_id, agent))

    def advance(self) -> None:
        """What the clock made due, until nothing is (an end can make its
        own retention due at once)."""
        while changes := self.due():
            for change in changes:
                self.apply(change)
