"""The agent's HTTP calls, as sans-I/O flows that ``AgentClient`` (blocking)
and ``AsyncAgentClient`` (asyncio) both drive: each call is built and its
answer read here once, and only the sending differs between the two.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypedDict

import httpx

from askd.client.discovery import Discovery, TokenSource
from askd.client.errors import QuestionLost
from askd.client.http import BearerAuth, Call, Flow, RetryPolicy, health, json_or_raise, send, seg
from askd.client.results import Result, question_dicts, read_result

if TYPE_CHECKING:
    from askd.client.results import QuestionLike

DEFAULT_POLL_SECONDS = 25.0
MAX_POLL_SECONDS = 55.0  # stay under the 60 s many proxies and tool runners allow
# Extra read time over a long-poll's wait before the link counts as dead.
READ_GRACE_SECONDS = 15.0
# Where askd publishes the public keys its receipts verify against (protocol section 16).
JWKS_PATH = "/.well-known/jwks.json"


def ask_body(
    user: str | None,
    questions: QuestionLike | Iterable[QuestionLike],
    metadata: Mapping[str, Any] | None,
    timeout: float | None,
    require_online: bool,
    parent_session: str | None,
    max_extension: float | None = None,
    on_timeout: Mapping[str, Any] | None = None,
    to: Sequence[str] | None = None,
    escalate: Sequence[tuple[float, Sequence[str]]] | None = None,
    *,
    remind: tuple[float, int] | None = None,
    host_key: str | None = None,
) -> dict[str, Any]:
    """The ask's body. ``user`` or ``to`` (users and ``group:NAME``
    entries) names whom to ask; ``escalate`` is ``(afterSeconds, entries)``
    steps that join the audience while nobody answers; ``remind`` is
    ``(everySeconds, times)``: those with no open tab are reminded;
    ``host_key`` lets this process's own host answer for the person."""
    body: dict[str, Any] = {"questions": question_dicts(questions)}
    return _audience_and_limits(
        body, user, metadata, timeout, require_online, parent_session, max_extension, on_timeout, to, escalate, remind, host_key
    )


class _SharedOptions(TypedDict, total=False):
    """The keywords an ask of questions and an approval share (``ask_body``'s
    and ``approval_body``'s parameters say what each means)."""

    to: Sequence[str] | None
    max_extension: float | None
    escalate: Sequence[tuple[float, Sequence[str]]] | None
    remind: tuple[float, int] | None
    host_key: str | None


class AskOptions(_SharedOptions, total=False):
    """``ask``'s and ``submit``'s keywords past the positional ones and
    ``idempotency_key``: what ``ask_body`` takes after ``parent_session``,
    written once for the blocking and the asyncio agent."""

    on_timeout: Mapping[str, Any] | None


class ApprovalOptions(_SharedOptions, total=False):
    """``request_approval``'s keywords past ``name`` and ``arguments``: what
    ``approval_body`` takes (its parameters say what each means)."""

    summary: str | None
    preview: str | None
    schema: Mapping[str, Any] | bool | None
    editable: bool
    allow_always: bool
    quorum: int | None
    user: str | None
    metadata: Mapping[str, Any] | None
    timeout: float | None
    require_online: bool
    parent_session: str | None


def approval_body(
    name: str,
    arguments: Mapping[str, Any],
    *,
    summary: str | None = None,
    preview: str | None = None,
    schema: Mapping[str, Any] | bool | None = None,
    editable: bool = False,
    allow_always: bool = False,
    quorum: int | None = None,
    user: str | None = None,
    to: Sequence[str] | None = None,
    metadata: Mapping[str, Any] | None = None,
    timeout: float | None = None,
    require_online: bool = False,
    parent_session: str | None = None,
    max_extension: float | None = None,
    escalate: Sequence[tuple[float, Sequence[str]]] | None = None,
    remind: tuple[float, int] | None = None,
    host_key: str | None = None,
) -> dict[str, Any]:
    """An approval's ask (protocol section 17): ``action`` in place of
    ``questions``, checked against ``Action`` before sending (a bad schema
    fails here, not at the daemon). No ``on_timeout``: silence is never consent."""
    action: dict[str, Any] = {"name": name, "arguments": dict(arguments)}
    if summary is not None:
        action["summary"] = summary
    if preview is not None:
        action["preview"] = preview
    if schema is not None:
        action["schema"] = schema if isinstance(schema, bool) else dict(schema)
    if editable:
        action["editable"] = True
    if allow_always:
        action["allowAlways"] = True
    from askd.protocol.action import Action  # pydantic, loaded when an approval is built

    Action.model_validate(action)
    body: dict[str, Any] = {"action": action}
    if quorum is not None:
        body["quorum"] = quorum
    return _audience_and_limits(
        body, user, metadata, timeout, require_online, parent_session, max_extension, None, to, escalate, remind, host_key
    )


def _audience_and_limits(
    body: dict[str, Any],
    user: str | None,
    metadata: Mapping[str, Any] | None,
    timeout: float | None,
    require_online: bool,
    parent_session: str | None,
    max_extension: float | None,
    on_timeout: Mapping[str, Any] | None,
    to: Sequence[str] | None,
    escalate: Sequence[tuple[float, Sequence[str]]] | None,
    remind: tuple[float, int] | None = None,
    host_key: str | None = None,
) -> dict[str, Any]:
    """The keys an ask of questions and an approval share."""
    if user is not None:
        body["userId"] = user
    if to is not None:
        body["to"] = list(to)
    if escalate:
        body["escalate"] = [{"afterSeconds": after, "to": list(entries)} for after, entries in escalate]
    if remind is not None:
        body["remind"] = {"everySeconds": remind[0], "times": remind[1]}
    if max_extension:
        body["maxExtensionSeconds"] = max_extension
    if on_timeout is not None:
        body["onTimeout"] = {"answers": dict(on_timeout)}
    if metadata is not None:
        body["metadata"] = dict(metadata)
    if timeout is not None:
        body["timeoutSeconds"] = timeout
    if require_online:
        body["requireOnline"] = True
    if parent_session is not None:
        body["parentSessionId"] = parent_session
    if host_key is not None:
        body["hostKey"] = host_key
    return body


class AgentFlows:
    """The calls, as sans-I/O flows shared by the sync and async clients.
    ``check``: each result is checked against the wire's definition
    (``read_result``); ``askd hook`` alone reads its results unchecked."""

    def __init__(self, base_url: str, poll_seconds: float, retry: RetryPolicy, check: bool = True) -> None:
        if not 0 < poll_seconds <= MAX_POLL_SECONDS:
            raise ValueError(f"poll_seconds must be in (0, {MAX_POLL_SECONDS:g}]")
        self.base_url, self.poll, self.retry, self.check = base_url, poll_seconds, retry, check

    def _read(self, response: httpx.Response) -> Result:
        return read_result(json_or_raise(response), self.check)

    def _send(self, call: Call) -> Flow[httpx.Response]:
        return send(call, self.retry, self.base_url)

    def submit(self, session: str, body: dict[str, Any], key: str, wait: float) -> Flow[Result]:
        call = Call(
            "POST",
            f"/v1/sessions/{seg(session)}/questions",
            params={"wait": wait} if wait else None,
            json=body,
            headers={"Idempotency-Key": key},
            read_timeout=wait + READ_GRACE_SECONDS,
        )
        response = yield from self._send(call)
        return self._read(response)

    def result(self, session: str, request_id: str, wait: float = 0.0) -> Flow[Result]:
        call = Call(
            "GET",
            f"/v1/sessions/{seg(session)}/questions/{seg(request_id)}",
            params={"wait": round(wait, 3)} if wait else None,
            read_timeout=wait + READ_GRACE_SECONDS,
        )
        response = yield from self._send(call)
        if response.status_code == 404:
            raise QuestionLost(session, request_id)
        return self._read(response)

    def wait(self, session: str, request_id: str, timeout: float | None) -> Flow[Result]:
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            left = self.poll if deadline is None else max(0.0, min(self.poll, deadline - time.monotonic()))
            result = yield from self.result(session, request_id, left)
            if not result.pending or (deadline is not None and time.monotonic() >= deadline):
                return result

    def ask(self, session: str, body: dict[str, Any], key: str) -> Flow[Result]:
        result = yield from self.submit(session, body, key, self.poll)
        if not result.pending:
            return result
        return (yield from self.wait(session, result.request_id, None))

    def approval(
        self, session: str, name: str, arguments: Mapping[str, Any], key: str | None, wait: bool, options: ApprovalOptions
    ) -> Flow[Result]:
        """``request_approval``: the body checked before anything is sent, then
        asked and waited on as ``ask`` does, or (``wait`` false) only submitted."""
        body = approval_body(name, arguments, **options)
        key = key or new_key()
        return (yield from (self.ask(session, body, key) if wait else self.submit(session, body, key, 0.0)))

    def health(self) -> Flow[dict[str, Any]]:
        return (yield from health(self.base_url))

    def jwks(self) -> Flow[dict[str, Any]]:
        """The daemon's public receipt keys (protocol section 16), retried
        as every call is: what an executor checks a receipt against."""
        response = yield from self._send(Call("GET", JWKS_PATH))
        keys: dict[str, Any] = json_or_raise(response)  # {"keys": [...]}, protocol section 16
        return keys

    def pending(self, session: str) -> Flow[list[dict[str, Any]]]:
        response = yield from self._send(Call("GET", f"/v1/sessions/{seg(session)}/questions"))
        listed: list[dict[str, Any]] = json_or_raise(response)["pending"]  # protocol section 5's listing
        return listed

    def withdraw(self, session: str, request_id: str) -> Flow[Result]:
        call = Call("DELETE", f"/v1/sessions/{seg(session)}/questions/{seg(request_id)}")
        response = yield from self._send(call)
        if response.status_code == 404:
            raise QuestionLost(session, request_id, _message(response))
        return self._read(response)

    def extend(self, session: str, request_id: str, seconds: float) -> Flow[Result]:
        call = Call("POST", f"/v1/sessions/{seg(session)}/questions/{seg(request_id)}/extend", json={"seconds": seconds})
        response = yield from self._send(call)
        if response.status_code == 404:
            raise QuestionLost(session, request_id, _message(response))
        return self._read(response)

    def answer_for(
        self, session: str, request_id: str, user: str, answers: Mapping[str, Any], via: str, host_key: str | None
    ) -> Flow[Result | None]:
        body = {"answers": dict(answers), **_relayed(user, via, host_key)}
        return (yield from self._on_behalf(session, request_id, "answer", body))

    def decline_for(
        self, session: str, request_id: str, user: str, reason: str | None, via: str, host_key: str | None
    ) -> Flow[Result | None]:
        body = _relayed(user, via, host_key)
        if reason is not None:
            body["reason"] = reason
        return (yield from self._on_behalf(session, request_id, "decline", body))

    def approve_for(
        self, session: str, request_id: str, user: str, arguments: Mapping[str, Any] | None, scope: str | None, via: str,
        host_key: str | None,
    ) -> Flow[Result | None]:
        body = _relayed(user, via, host_key)
        if arguments is not None:
            body["arguments"] = dict(arguments)
        if scope is not None:
            body["scope"] = scope
        return (yield from self._on_behalf(session, request_id, "approve", body))

    def _on_behalf(self, session: str, request_id: str, verb: str, body: dict[str, Any]) -> Flow[Result | None]:
        """``verb`` (answer, decline, approve) for the person who did so in the agent's
        own window; None when the question was no longer pending for them."""
        call = Call("POST", f"/v1/sessions/{seg(session)}/questions/{seg(request_id)}/{verb}", json=body)
        response = yield from self._send(call)
        if response.status_code == 404:
            if _code(response) == "not_pending":
                return None
            raise QuestionLost(session, request_id, _message(response))
        return self._read(response)

    def cancel_session(self, session: str) -> Flow[int]:
        response = yield from self._send(Call("POST", f"/v1/sessions/{seg(session)}/cancel"))
        cancelled: int = json_or_raise(response)["cancelled"]  # protocol section 5: {"cancelled": N}
        return cancelled


def _relayed(user: str, via: str, host_key: str | None) -> dict[str, Any]:
    """What every relay's body names: the person, their channel, the ask's hostKey."""
    body: dict[str, Any] = {"answeredBy": user, "via": via}
    if host_key is not None:
        body["hostKey"] = host_key
    return body


def _code(response: httpx.Response) -> str | None:
    try:
        return str(response.json()["error"]["code"])
    except (ValueError, KeyError, TypeError):
        return None


def _message(response: httpx.Response) -> str | None:
    try:
        return str(response.json()["error"]["message"])
    except (ValueError, KeyError, TypeError):
        return None


def setup(
    url: str | None, token: TokenSource | None, poll_seconds: float, retry: RetryPolicy | None, ca_file: str | Path | None,
    headers: Mapping[str, str] | None = None, check: bool = True,
) -> tuple[str, AgentFlows, dict[str, Any]]:
    """The base URL, the flows (``check``: as ``AgentFlows``') and the httpx
    client's arguments (``headers``: sent with every call, as ``askd mcp``
    sends ``Askd-Via: mcp``)."""
    found = Discovery()
    base = found.url(url)
    source = token if token is not None else found.agent_token()
    flows = AgentFlows(base, poll_seconds, retry or RetryPolicy(), check)
    http: dict[str, Any] = {
        "base_url": base,
        "auth": BearerAuth(source),
        "timeout": httpx.Timeout(10.0, read=poll_seconds + READ_GRACE_SECONDS),
        "verify": found.tls(base, ca_file) or True,
        "headers": dict(headers or {}),
    }
    return base, flows, http


def new_key() -> str:
    return uuid.uuid4().hex
