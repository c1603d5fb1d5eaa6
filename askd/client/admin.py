"""A small blocking client for the admin API (protocol section 6), used by the CLI."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal

import httpx

from askd.client.discovery import Discovery, TokenSource
from askd.client.errors import ApiError
from askd.client.http import NO_RETRY, BearerAuth, Call, RetryPolicy, drive_sync, health, json_or_raise, send, seg
from askd.protocol import codec


class AdminClient:
    """``url`` and ``token`` default to what ``Discovery`` finds; over HTTPS
    ``ca_file`` (default ``ASKD_CA_FILE``) is trusted besides the system's
    CAs. Admin calls are not retried by default: a person is waiting at a
    terminal."""

    def __init__(
        self,
        url: str | None = None,
        token: TokenSource | None = None,
        *,
        retry: RetryPolicy = NO_RETRY,
        timeout: float = 10.0,
        discovery: Discovery | None = None,
        ca_file: str | Path | None = None,
    ) -> None:
        found = discovery or Discovery()
        self.url = found.admin_url(url)
        self._found = found
        self._retry = retry
        verify = found.tls(self.url, ca_file) or True
        self._http = httpx.Client(base_url=self.url, timeout=timeout, verify=verify)
        self._auth: BearerAuth | None = BearerAuth(token) if token is not None else None

    def __enter__(self) -> AdminClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._http.close()

    def _bearer(self) -> BearerAuth:
        # Resolved on first use, so `health()` works without any token.
        if self._auth is None:
            self._auth = BearerAuth(self._found.admin_token())
        return self._auth

    def _call(self, method: str, path: str, *, auth: bool = True, **kw: Any) -> dict[str, Any]:
        http = self._http
        # httpx takes None (no auth) at run time; its setter's annotation leaves None out.
        http.auth = self._bearer() if auth else None  # type: ignore[assignment]
        response = drive_sync(http, send(Call(method, path, **kw), self._retry, self.url))
        # Every admin reply is a JSON object (protocol section 6), read as it came.
        body: dict[str, Any] = json_or_raise(response)
        return body

    def _listed(self, key: str, method: str, path: str, **kw: Any) -> list[Any]:
        """The list an admin reply holds under ``key``, as it came."""
        listed: list[Any] = self._call(method, path, **kw)[key]
        return listed

    def health(self) -> dict[str, Any]:
        """``GET /healthz``: needs no token (see ``http.health``)."""
        self._http.auth = None  # type: ignore[assignment]  # no auth: see _call
        return drive_sync(self._http, health(self.url))

    def stats(self) -> dict[str, Any]:
        return self._call("GET", "/admin/v1/stats")

    def pending(self, session: str | None = None, user: str | None = None) -> list[dict[str, Any]]:
        params = {k: v for k, v in (("sessionId", session), ("userId", user)) if v is not None}
        return self._listed("pending", "GET", "/admin/v1/pending", params=params or None)

    def question(self, session: str, request_id: str) -> dict[str, Any]:
        """One pending question; ``ApiError`` 404 when it is not pending."""
        for item in self.pending(session=session):
            if item["requestId"] == request_id:
                return item
        raise ApiError(404, "not_pending", f"no pending question {request_id} in session {session}")

    def answer(self, session: str, request_id: str, answers: dict[str, Any]) -> bool:
        path = f"/admin/v1/sessions/{seg(session)}/questions/{seg(request_id)}/answer"
        return bool(self._call("POST", path, json={"answers": answers})["accepted"])

    def decline(self, session: str, request_id: str, reason: str | None = None) -> bool:
        """Decline a pending question on the person's behalf."""
        path = f"/admin/v1/sessions/{seg(session)}/questions/{seg(request_id)}/decline"
        return bool(self._call("POST", path, json={} if reason is None else {"reason": reason})["accepted"])

    def approve(
        self, session: str, request_id: str, arguments: dict[str, Any] | None = None, scope: str | None = None
    ) -> dict[str, Any]:
        """One approval of a pending action (protocol section 17), by this
        token's ``sub``: ``{"accepted": True, "approvals": k, "needed": n}``;
        ``ApiError`` 409 ``already_voted``, 404 ``not_pending``, 400 when the
        arguments fail the schema or the action does not allow them."""
        body: dict[str, Any] = {}
        if arguments is not None:
            body["arguments"] = arguments
        if scope is not None:
            body["scope"] = scope
        path = f"/admin/v1/sessions/{seg(session)}/questions/{seg(request_id)}/approve"
        return self._call("POST", path, json=body)

    def connections(self, user: str | None = None) -> list[dict[str, Any]]:
        params = {"userId": user} if user is not None else None
        return self._listed("connections", "GET", "/admin/v1/connections", params=params)

    def disconnect(
        self,
        *,
        user: str | None = None,
        session: str | None = None,
        connection: str | None = None,
        all: bool = False,
        mode: Literal["abort", "close"] = "abort",
    ) -> int:
        body: dict[str, Any] = {"mode": mode}
        for key, value in (("userId", user), ("sessionId", session), ("connectionId", connection)):
            if value is not None:
                body[key] = value
        if all:
            body["all"] = True
        return int(self._call("POST", "/admin/v1/disconnect", json=body)["disconnected"])

    def revoke_all(self) -> float:
        """Refuse every token issued until now (this client's too); returns the instant."""
        return float(self._call("POST", "/admin/v1/tokens/revoke-all")["notBefore"])

    def cancel_session(self, session: str) -> int:
        return int(self._call("POST", f"/admin/v1/sessions/{seg(session)}/cancel")["cancelled"])

    def groups(self) -> list[dict[str, Any]]:
        """Every group, ``{"group", "members"}``, sorted by name."""
        return self._listed("groups", "GET", "/admin/v1/groups")

    def set_group(self, group: str, members: list[str]) -> list[str]:
        """Make ``group`` or replace its members; returns them as stored (sorted)."""
        return self._listed("members", "PUT", f"/admin/v1/groups/{seg(group)}", json={"members": members})

    def delete_group(self, group: str) -> bool:
        """Delete ``group``; ``ApiError`` 404 when there is none."""
        return bool(self._call("DELETE", f"/admin/v1/groups/{seg(group)}")["deleted"])

    def user(self, user: str) -> dict[str, Any]:
        """``{"user", "email", "slack"}``: the address askd mails ``user`` at
        and the Slack user id it sends direct messages to (None: none) and,
        while they are away, ``"away"``: ``{"user", "until", "delegates"}``."""
        return self._call("GET", f"/admin/v1/users/{seg(user)}")

    def set_user(self, user: str, **settings: str | None) -> dict[str, Any]:
        """Keep the given settings of ``user`` (``email``, ``slack``; None
        forgets one; those not given stay); returns the user as stored."""
        return self._call("PUT", f"/admin/v1/users/{seg(user)}", json=settings)

    def set_user_email(self, user: str, email: str | None) -> dict[str, Any]:
        """Keep ``user``'s address (None forgets it); returns it as stored (normalized)."""
        return self._call("PUT", f"/admin/v1/users/{seg(user)}", json={"email": email})

    def set_away(self, user: str, until: str, delegates: list[str]) -> dict[str, Any]:
        """``user`` is away until ``until`` (RFC 3339), their questions also
        going to ``delegates`` (user ids, ``group:G``); returns ``{"user",
        "until", "delegates"}`` as stored (protocol section 20, Away; askd 1.3)."""
        body = {"until": until, "delegates": delegates}
        return self._call("PUT", f"/admin/v1/users/{seg(user)}/away", json=body)

    def end_away(self, user: str) -> dict[str, Any]:
        """End ``user``'s away; ``ApiError`` 404 when they are not away."""
        return self._call("DELETE", f"/admin/v1/users/{seg(user)}/away")

    def notify_test(self, *, user: str = "you", email: str | None = None) -> dict[str, Any]:
        """Have the daemon send a sample question through each of its own
        notification channels (``POST /admin/v1/notify/test``, askd 1.3);
        returns its report (``askd notify test --json``'s keys)."""
        body: dict[str, Any] = {"user": user}
        if email is not None:
            body["email"] = email
        return self._call("POST", "/admin/v1/notify/test", json=body)

    def audit_head(self) -> dict[str, Any]:
        """``GET /admin/v1/audit/head``: the chain's last seq and hash, signed."""
        return self._call("GET", "/admin/v1/audit/head")

    def audit(self, *, fmt: str = "jsonl", page: int = 100_000, **filters: str | None) -> Iterator[str]:
        """Every audit record matching ``filters`` (``since``, ``until``,
        ``session``, ``user``), oldest first, as lines of NDJSON or CSV
        (the header once), streamed a page of ``GET /admin/v1/audit`` at a time."""
        after, first = 0, True
        while True:
            params = {k: v for k, v in filters.items() if v is not None}
            params.update(format=fmt, limit=str(page), after_seq=str(after))
            got, last = 0, None
            with self._http.stream("GET", "/admin/v1/audit", params=params, auth=self._bearer()) as response:
                if response.status_code != 200:
                    response.read()
                    json_or_raise(response)
                lines = response.iter_lines()
                if fmt == "csv":
                    header = next(lines, None)
                    if first and header is not None:
                        yield header
                for line in lines:
                    if not line:
                        continue
                    got, last = got + 1, line
                    yield line
            first = False
            if got < page or last is None:
                return
            after = int(last.split(",", 1)[0]) if fmt == "csv" else int(codec.loads(last)["seq"])
