"""What the HTTP clients share: bearer auth from a token source, reading
askd's JSON and its ``{"error": {...}}`` envelope, and retries as data.

Call logic is written once as generators (sans-I/O, like the daemon's
registry) that yield ``Call`` and ``Sleep`` steps and get back a response
or a transport error; ``drive_sync`` and ``drive_async`` run them over
``httpx.Client`` and ``httpx.AsyncClient``.
"""

from __future__ import annotations

import time
from collections.abc import Generator
from dataclasses import dataclass
from typing import Any, TypeVar
from urllib.parse import quote

import httpx

from askd.client.backoff import Backoff
from askd.client.discovery import TokenSource, cert_error, resolve_token
from askd.client.errors import ApiError, AuthError, DaemonUnavailable, UntrustedCertificate

T = TypeVar("T")


class BearerAuth(httpx.Auth):
    def __init__(self, token: TokenSource) -> None:
        self._token = token

    def auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        request.headers["Authorization"] = f"Bearer {resolve_token(self._token)}"
        yield request


def seg(value: str) -> str:
    """One path segment (ids may hold ``/`` or spaces)."""
    return quote(value, safe="")


@dataclass(frozen=True, slots=True)
class Call:
    method: str
    path: str
    params: dict[str, Any] | None = None
    json: Any = None
    headers: dict[str, str] | None = None
    read_timeout: float | None = None  # None: the client's default
    answers: tuple[int, ...] = ()  # 5xx statuses that are an answer, not a failure to retry


@dataclass(frozen=True, slots=True)
class Sleep:
    seconds: float


Outcome = httpx.Response | httpx.TransportError | None
Flow = Generator[Call | Sleep, Outcome, T]


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """Transport errors and 5xx are retried with backoff for up to
    ``retry_for`` seconds of consecutive failure, then ``DaemonUnavailable``."""

    retry_for: float = 120.0
    backoff_base: float = 0.2
    backoff_cap: float = 5.0


NO_RETRY = RetryPolicy(retry_for=0.0)


def describe(outcome: Outcome) -> str:
    if isinstance(outcome, httpx.Response):
        return f"HTTP {outcome.status_code}: {error_message(outcome)}"
    if isinstance(outcome, httpx.ConnectError):
        return "connection refused"
    return f"{type(outcome).__name__}: {outcome}" if outcome is not None else "no response"


def send(call: Call, policy: RetryPolicy, base_url: str = "") -> Flow[httpx.Response]:
    """One call, retried while askd is unreachable or answers 5xx. Returns
    the first response below 500. An untrusted certificate is not retried."""
    backoff = Backoff(policy.backoff_base, policy.backoff_cap)
    failing_since: float | None = None
    while True:
        outcome = yield call
        if isinstance(outcome, httpx.Response) and (outcome.status_code < 500 or outcome.status_code in call.answers):
            return outcome
        if isinstance(outcome, httpx.TransportError) and (bad := cert_error(outcome)) is not None:
            raise UntrustedCertificate(base_url or "?", bad.verify_message or str(bad))
        now = time.monotonic()
        failing_since = failing_since or now
        if now - failing_since >= policy.retry_for:
            raise DaemonUnavailable(base_url or "?", describe(outcome))
        yield Sleep(backoff.next())


def health(base_url: str) -> Flow[dict[str, Any]]:
    """``GET /healthz`` once, not retried: is the daemon there at all? A
    daemon whose store refuses writes answers 503 ``"status": "degraded"``:
    it is there, and that body is returned."""
    response = yield from send(Call("GET", "/healthz", answers=(503,)), NO_RETRY, base_url)
    if response.status_code == 503:
        try:
            body = response.json()
        except ValueError:
            body = None
        if not (isinstance(body, dict) and body.get("status") == "degraded"):
            raise DaemonUnavailable(base_url or "?", describe(response))
        return body
    healthy: dict[str, Any] = json_or_raise(response)  # /healthz answers a JSON object (protocol section 6)
    return healthy


def error_message(response: httpx.Response) -> str:
    try:
        err = response.json().get("error", {})
        return str(err.get("message") or response.reason_phrase)
    except (ValueError, AttributeError):
        return response.text.strip()[:200] or response.reason_phrase


def json_or_raise(response: httpx.Response) -> Any:
    """The JSON body of a 2xx; an ``ApiError`` (``AuthError`` for 401/403)
    otherwise."""
    if response.is_success:
        return response.json()
    code, message, details = "http_error", response.reason_phrase, None
    try:
        err = response.json()["error"]
        code, message, details = err["code"], err["message"], err.get("details")
    except (ValueError, KeyError, TypeError):
        message = response.text.strip()[:200] or message
    cls = AuthError if response.status_code in (401, 403) else ApiError
    raise cls(response.status_code, code, message, details)


def _timeout(client_timeout: httpx.Timeout, call: Call) -> httpx.Timeout:
    if call.read_timeout is None:
        return client_timeout
    return httpx.Timeout(
        connect=client_timeout.connect, read=call.read_timeout, write=client_timeout.write, pool=client_timeout.pool
    )


def drive_sync(http: httpx.Client, flow: Flow[T]) -> T:
    outcome: Outcome = None
    try:
        step = next(flow)
        while True:
            if isinstance(step, Sleep):
                time.sleep(step.seconds)
                outcome = None
            else:
                try:
                    outcome = http.request(
                        step.method, step.path, params=step.params, json=step.json, headers=step.headers,
                        timeout=_timeout(http.timeout, step),
                    )
                except httpx.TransportError as err:
                    outcome = err
            step = flow.send(outcome)
    except StopIteration as stop:
        value: T = stop.value  # what the flow returned: a Flow[T] returns a T
        return value


async def drive_async(http: httpx.AsyncClient, flow: Flow[T]) -> T:
    import asyncio  # here, not above: the blocking clients (askd hook) never load it

    outcome: Outcome = None
    try:
        step = next(flow)
        while True:
            if isinstance(step, Sleep):
                await asyncio.sleep(step.seconds)
                outcome = None
            else:
                try:
                    outcome = await http.request(
                        step.method, step.path, params=step.params, json=step.json, headers=step.headers,
                        timeout=_timeout(http.timeout, step),
                    )
                except httpx.TransportError as err:
                    outcome = err
            step = flow.send(outcome)
    except StopIteration as stop:
        value: T = stop.value  # what the flow returned: a Flow[T] returns a T
        return value
