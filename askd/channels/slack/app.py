"""The Slack app channel (protocol section 20, Slack as an app): each question posted with
``chat.postMessage``, and every message edited with ``chat.update`` when
it ends.

A question goes to ``notify.slack_channel`` (one message) and to each
person it is about who has a Slack user id (a direct message each: the
user id as the channel). An escalation step or a reminder replies in the
channel message's thread and sends its new (or reminded) members a direct
message of their own. Each post is claimed once (``slack:<rid>:<key>``)
before its first attempt, so no other node and no restart posts it again;
each message posted is kept in the store (``store.posts``: its channel,
``ts`` and what an edit starts from) until its question's result is gone.

When a question ends (``ENDED``, on every node), each message kept for it
is edited once (claimed ``slack-edit:<rid>:<key>``), then forgotten. A post
that lands after its question ended edits itself at once; at start, the
messages of questions that ended while no node edited them are edited
(``sweep``: no claim there, an edit is the same whoever makes it twice).
A ``429`` waits its ``Retry-After``; nothing here can delay, fail or change
an ask.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

import structlog

from askd.channels import links
from askd.channels.event import event, inbox_url
from askd.channels.slack import message as slack_message
from askd.channels.channel import ASKED, CLAIM_SLACK_SECONDS, ENDED, REMINDER, Channel, OnceKey, Delivery, Notice, Outcome
from askd.channels.retry import Retry
from askd.channels.slack.api import Call, SlackApi
from askd.store import StoreUnavailable
from askd.store.parts import Post

if TYPE_CHECKING:
    from askd.core import Request
    from askd.store.parts import Posts

log = structlog.get_logger("askd.slack")

WORKERS = 4  # calls to Slack at once
MAX_HELD = 1000  # notices held at once; more are dropped (counted, logged)
ROOT = "a0:#"  # the key of the channel's message, whose thread the others reply in


@dataclass(frozen=True, slots=True)
class _Asked:
    """A notice as the posts need it, taken when it comes (the question's
    text is gone once it ends)."""

    step: str  # a<escalation step> or r<reminder>
    note: str | None  # an escalation step's or a reminder's line
    ev: dict[str, Any]
    channel_links: dict[str, Any] | None
    links: dict[str, dict[str, Any]]


@dataclass(slots=True)
class _Post:
    key: str  # <step>:# (the channel) or <step>:@<user>
    to: str  # a channel id, or a user id (a direct message)
    message: slack_message.Message
    req: Request
    thread: str | None = None  # the root's ts: a reply in its thread


@dataclass(slots=True)
class _Edit:
    post: Post
    req: Request


class SlackApp(Channel):
    name = "slack"
    concurrency: ClassVar[int | None] = WORKERS

    def __init__(
        self,
        *,
        api: SlackApi,
        channel: str | None,
        link_base: str,
        slack_ids: Callable[[Sequence[str]], Awaitable[dict[str, str]]],
        posts: Posts,
        pending: Callable[[str, str], bool],
        lookup: Callable[[str, str], Request | None],
        keep_seconds: float,
        minter: links.Minter | None = None,
        retry: Retry | None = None,
        max_held: int = MAX_HELD,
    ) -> None:
        super().__init__(retry or Retry(attempts=8), max_held)
        self.api, self.channel, self.link_base = api, channel, link_base
        self._slack_ids = slack_ids  # the directory's Slack user ids
        self._posts = posts
        self._pending, self._lookup = pending, lookup
        self._keep = keep_seconds  # how long past its creation (and allowance) a post may still be edited
        self._minter = minter
        self._unclaimed: set[str] = set()  # request ids the sweep edits without a claim

    # ---- what a notice makes ---------------------------------------------

    def prepare(self, notice: Notice) -> _Asked | str | None:
        req = notice.req
        if notice.kind == ENDED:
            return ENDED
        if not req.pending:
            return None
        if notice.kind == ASKED:
            step = req.escalations
            note = slack_message.escalation_note(step, notice.newcomers) if step else None
            key = f"a{step}"
        elif notice.kind == REMINDER:
            note, key = slack_message.reminder_note(notice.reminder, notice.newcomers), f"r{notice.reminder}"
        else:
            return None
        ev = event(req.describe(), inbox_url(self.link_base, req.session_id), notice.users)
        m = self._minter
        # A channel is shared: Minter.channel_links says what its message may carry.
        channel_links = m.channel_links(req, notice.users) if m else None
        return _Asked(key, note, ev, channel_links, m.links_for(req, notice.newcomers) if m else {})

    async def deliveries(self, prepared: _Asked | str, notice: Notice) -> list[Delivery]:
        req = notice.req
        try:
            if isinstance(prepared, str):
                return await self._edits(req)
            return await self._posts_of(prepared, notice)
        except StoreUnavailable as err:
            log.warning("slack.skipped", reason="store unavailable", error=str(err), **_ids(req))
            return []

    async def _posts_of(self, a: _Asked, notice: Notice) -> list[Delivery]:
        req = notice.req
        out: list[_Post] = []
        if self.channel is not None:
            root = None
            if a.step != "a0":
                root = next((p for p in await self._posts.of(req.request_id) if p.key == ROOT), None)
            if root is not None:
                out.append(_Post(f"{a.step}:#", root.channel, slack_message.reply(a.ev, a.channel_links, a.note or ""), req, root.ts))
            else:  # the first message (or, with no root kept, a message of its own)
                out.append(_Post(f"{a.step}:#", self.channel, slack_message.question(a.ev, a.channel_links, a.note), req))
        ids = await self._slack_ids(notice.newcomers) if notice.newcomers else {}
        for user in sorted(ids):
            msg = slack_message.question(a.ev, a.links.get(user), a.note)
            out.append(_Post(f"{a.step}:@{user}", ids[user], msg, req))
        until = req.expires_at + req.max_extension + CLAIM_SLACK_SECONDS
        return [
            Delivery(
                req.session_id,
                req.request_id,
                p,
                OnceKey(f"slack:{req.request_id}:{p.key}", until, req, req.escalations),
                recipient=_recipient(p.key, p.to),
            )
            for p in out
        ]

    async def _edits(self, req: Request) -> list[Delivery]:
        claimed = req.request_id not in self._unclaimed
        self._unclaimed.discard(req.request_id)
        return [
            Delivery(
                req.session_id,
                req.request_id,
                _Edit(post, req),
                OnceKey(f"slack-edit:{req.request_id}:{post.key}", post.until, req, req.escalations) if claimed else None,
                only_pending=False,
                recipient=_recipient(post.key, post.channel),
            )
            for post in await self._posts.of(req.request_id)
        ]

    # ---- one attempt ------------------------------------------------------

    async def attempt(self, delivery: Delivery) -> Outcome:
        if isinstance(delivery.payload, _Edit):
            return await self._edit(delivery.payload)
        p: _Post = delivery.payload
        got = await self.api.post(p.to, p.message, p.thread)
        if got.ok and got.channel and got.ts:
            await self._posted(p, got)
        return Outcome(got.ok, got.retryable, got.retry_after, got, None if got.ok else got.describe())

    async def _posted(self, p: _Post, got: Call) -> None:
        req = p.req
        until = req.created_at + req.max_extension + self._keep
        post = Post(req.session_id, req.request_id, p.key, str(got.channel), str(got.ts), slack_message.kept(p.message), until)
        try:
            await self._posts.keep(post)
        except StoreUnavailable as err:  # posted, but no node will edit it
            log.warning("slack.unkept", reason="store unavailable", error=str(err), key=p.key, **_ids(req))
            return
        if not self._pending(req.session_id, req.request_id):
            # It ended while this was on its way: its end found nothing to edit.
            ended = self._lookup(req.session_id, req.request_id)
            if ended is not None:
                self.submit(Notice(ended, [], [], ENDED))

    async def _edit(self, e: _Edit) -> Outcome:
        got = await self.api.update(e.post.channel, e.post.ts, slack_message.ended(e.post.body, e.req))
        if got.ok or not got.retryable:  # edited, or never will be: either way done with it
            try:
                await self._posts.done(e.req.request_id, e.post.key)
            except StoreUnavailable as err:  # a later start edits it again: the same edit
                log.warning("slack.undone", reason="store unavailable", error=str(err), key=e.post.key, **_ids(e.req))
        return Outcome(got.ok, got.retryable, got.retry_after, got, None if got.ok else got.describe())

    # ---- at start -----------------------------------------------------------

    async def sweep(self) -> int:
        """Edit the messages of questions that ended while no node edited
        them (a crash between the end and the edit); forget those of
        questions no longer kept. Returns how many questions it edits."""
        try:
            kept = await self._posts.every()
        except StoreUnavailable as err:
            log.warning("slack.sweep_skipped", reason="store unavailable", error=str(err))
            return 0
        edited = 0
        for rid, sid in {(p.request_id, p.session_id) for p in kept}:
            req = self._lookup(sid, rid)
            if req is None:  # its result is gone: nothing left to say how it ended
                for post in (p for p in kept if p.request_id == rid):
                    try:
                        await self._posts.done(rid, post.key)
                    except StoreUnavailable:
                        pass
            elif not req.pending:
                self._unclaimed.add(rid)
                if self.submit(Notice(req, [], [], ENDED)):
                    edited += 1
        return edited

    # ---- what happened ----------------------------------------------------

    def report(self, event: str, delivery: Delivery | None, notice: Notice, got: Outcome | None = None, **fields: Any) -> None:
        ids = _ids(notice.req)
        if delivery is None:  # about the notice: no delivery was made of it
            if event == "dropped":
                log.warning("slack.dropped", **ids, **fields)
            else:
                log.exception("slack.error", **fields, **ids)
            return
        edit = isinstance(delivery.payload, _Edit)
        what = {"key": delivery.payload.post.key if edit else delivery.payload.key, "call": "chat.update" if edit else "chat.postMessage"}
        if event == "skipped":
            log.info("slack.skipped", **fields, **what, **ids)
            return
        if event == "error":
            log.exception("slack.error", **fields, **what, **ids)
            return
        assert got is not None
        call: Call = got.detail
        outcome = {"attempt": delivery.attempts, "status": call.status, "elapsedMs": round(call.elapsed * 1000), **what, **ids}
        if event == "delivered":
            log.info("slack.updated" if edit else "slack.posted", channel=call.channel, ts=call.ts, **outcome)
        elif event == "failed":
            log.warning("slack.failed", reason="exhausted" if call.retryable else "rejected", error=call.error, **outcome)
        else:  # retry
            log.info("slack.retry", error=call.error, retryAfter=call.retry_after, **fields, **outcome)

    async def aclose(self) -> None:
        await super().aclose()
        await self.api.aclose()


def _ids(req: Request) -> dict[str, Any]:
    return {"sessionId": req.session_id, "requestId": req.request_id}


def _recipient(key: str, to: str) -> str:
    """Whom a post is for, as the delivery status names it: the askd user
    of a direct message (``<step>:@<user>``), else the chat channel."""
    _, _, who = key.partition(":")
    return who[1:] if who.startswith("@") else f"#{to}"
