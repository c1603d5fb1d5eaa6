"""One call of Slack's Web API (``chat.postMessage``, ``chat.update``)
through Slack's own SDK (``slack_sdk``'s ``AsyncWebClient``), reported as
data, never raised.

The SDK retries nothing here (no retry handlers): the delivery worker does,
with its backoff, honouring a ``429``'s ``Retry-After``. The bot token is
the client's alone: no line of askd's logs carries it, nor the SDK's error
texts (only Slack's ``error`` word and the HTTP status are kept).
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass
from typing import Any

import aiohttp
from slack_sdk.errors import SlackApiError, SlackClientError
from slack_sdk.web.async_client import AsyncWebClient

from askd.channels.retry import retry_after as retry_after_of

DEFAULT_API_URL = "https://slack.com/api/"

# The SDK's own logger, kept above DEBUG: its debug lines hold every
# message's body, answer links included (each one answers as its recipient).
_SDK_LOG = logging.getLogger("askd.slack.sdk")
_SDK_LOG.setLevel(logging.WARNING)

# Slack's ``error`` words that say "try again later"; any other is final
# (``channel_not_found``, ``not_in_channel``, ``invalid_auth``, ...).
_TRANSIENT = frozenset({"ratelimited", "rate_limited", "internal_error", "fatal_error", "service_unavailable", "request_timeout"})


@dataclass(frozen=True, slots=True)
class Call:
    """What one call got: Slack's ``channel`` and ``ts`` when it took the
    message, else ``error`` (Slack's word, or what failed on the way)."""

    ok: bool
    status: int | None = None
    error: str | None = None
    retryable: bool = False
    retry_after: float | None = None
    channel: str | None = None
    ts: str | None = None
    elapsed: float = 0.0

    def describe(self) -> str:
        return "ok" if self.ok else f"{self.status or '-'} {self.error}"


class SlackApi:
    def __init__(self, token: str, base_url: str = DEFAULT_API_URL, timeout: float = 10.0) -> None:
        self.base_url, self.timeout = base_url, timeout
        self._token = token
        self._client: AsyncWebClient | None = None
        self._session: aiohttp.ClientSession | None = None

    def _web(self) -> AsyncWebClient:
        # Made in the loop (aiohttp's session belongs to it), once: one
        # pool of connections for every call.
        if self._client is None:
            self._session = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=self.timeout))
            self._client = AsyncWebClient(
                token=self._token, base_url=self.base_url, timeout=int(max(1, self.timeout)), session=self._session,
                retry_handlers=[], logger=_SDK_LOG,
            )
        return self._client

    async def post(self, channel: str, message: dict[str, Any], thread_ts: str | None = None) -> Call:
        """``chat.postMessage`` to ``channel`` (a channel id, or a user id:
        Slack opens the app's direct message with them), in a thread when
        ``thread_ts`` is given."""
        extra = {"thread_ts": thread_ts} if thread_ts is not None else {}
        return await self._call("chat_postMessage", channel=channel, text=message["text"], blocks=message["blocks"], **extra)

    async def update(self, channel: str, ts: str, message: dict[str, Any]) -> Call:
        """``chat.update`` of the message at ``channel``/``ts``."""
        return await self._call("chat_update", channel=channel, ts=ts, text=message["text"], blocks=message["blocks"])

    async def _call(self, method: str, **args: Any) -> Call:
        started = time.monotonic()
        try:
            async with asyncio.timeout(self.timeout):
                got = await getattr(self._web(), method)(**args)
        except SlackApiError as err:
            r = err.response
            data = r.data if isinstance(r.data, dict) else {}
            error = str(data.get("error") or f"HTTP {r.status_code}")
            retry_after = retry_after_of((r.headers or {}).get("Retry-After") or (r.headers or {}).get("retry-after"))
            transient = r.status_code == 429 or r.status_code >= 500 or error in _TRANSIENT
            return Call(False, r.status_code, error, transient, retry_after, elapsed=time.monotonic() - started)
        except (aiohttp.ClientError, SlackClientError, TimeoutError, OSError) as err:
            # Never the exception's own text: some carry the URL.
            what = f"no answer within {self.timeout:g} s" if isinstance(err, TimeoutError) else f"the call failed ({type(err).__name__})"
            return Call(False, None, what, True, elapsed=time.monotonic() - started)
        return Call(True, got.status_code, channel=got.get("channel"), ts=got.get("ts"), elapsed=time.monotonic() - started)

    async def aclose(self) -> None:
        if self._session is not None:
            await self._session.close()
        self._session = self._client = None
