"""What each store's history index (``GET /v1/me/history``) is made of: a
question's audience is its ``asked`` record's ``audience`` and each
``escalated`` record's ``added``; its end's record goes on the list of each
of those users, the last ``HISTORY`` kept. A store writes the index with
the records (same step), so a call reads at most ``HISTORY`` records; a
record retention removed leaves the index too.

The index also keeps each question's title (the trail keeps no text, and
an ended question keeps none either): taken from its ``Asked`` change,
kept while it is pending, then with its end on each user's list (capped
and removed with it). The hash-chained records never hold it."""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, NamedTuple

from askd.core.changes import Asked, Change
from askd.protocol import codec

HISTORY = 100
ENDS = frozenset({"answered", "declined", "timeout", "cancelled", "withdrawn"})
TITLE_CHARS = 200
# What of a question is read for its title: its first lines are enough, and
# it is read in the commit's step, so a long question costs no more.
SOURCE_CHARS = 4096


class PastQuestion(NamedTuple):
    """One entry of a user's history: its end's record, and its question's
    title (None: asked before the index kept titles, or nothing to show)."""

    record: dict[str, Any]
    title: str | None


def _cut(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= TITLE_CHARS else text[: TITLE_CHARS - 1].rstrip() + "…"


def title_of(payload: Mapping[str, Any]) -> str | None:
    """What a person was asked, in one line of plain text (as the page's
    panel names it): an action's summary, else its name; else the first
    question's header, else the plain text of its Markdown (as a mail's
    Subject: ``askd.web.markdown.plain``); at most ``TITLE_CHARS``."""
    from askd.web.markdown import plain  # markdown-it: loaded only where the trail is written

    action = payload.get("action")
    if isinstance(action, dict):
        summary = action.get("summary")
        text = plain(summary[:SOURCE_CHARS], TITLE_CHARS) if isinstance(summary, str) else ""
        return text or _cut(str(action.get("name") or "")) or None
    questions = payload.get("questions")
    first = questions[0] if isinstance(questions, list) and questions and isinstance(questions[0], dict) else {}
    header = first.get("header")
    if isinstance(header, str) and header.strip():
        return _cut(header)
    question = str(first.get("question") or "")[:SOURCE_CHARS]
    # A question that is only a code block has no line of text: its source, as the page shows it.
    return plain(question, TITLE_CHARS) or _cut(question) or None


def titles(taken: Sequence[Change]) -> dict[tuple[str, str], str]:
    """The title of each question ``taken`` asks, by (sessionId, requestId)."""
    out: dict[tuple[str, str], str] = {}
    for change in taken:
        if not isinstance(change, Asked) or change.request.frame is None:
            continue
        req = change.request
        try:
            frame = codec.loads(req.frame, exact_numbers=False)
        except ValueError:
            continue  # no title is no reason to refuse the write
        payload = frame.get("payload") if isinstance(frame, dict) else None
        title = title_of(payload) if isinstance(payload, dict) else None
        if title is not None:
            out[(req.session_id, req.request_id)] = title
    return out


def title_of_change(change: Change) -> str | None:
    """The title of the question an ``Asked`` change asks (None otherwise)."""
    return next(iter(titles([change]).values()), None)


def joined(rec: Mapping[str, Any]) -> list[str]:
    """The users a record adds to its question's audience ([] for most)."""
    event = rec["event"]
    if event == "asked":
        return list(rec["data"].get("audience") or ())
    if event == "escalated":
        return list(rec["data"].get("added") or ())
    return []


class MemoryHistory:
    """The index in memory: the audience and title of each question not yet
    ended, and each user's last ends (the records themselves and their
    titles, oldest first)."""

    def __init__(self) -> None:
        self._audience: dict[tuple[str, str], set[str]] = {}
        self._titles: dict[tuple[str, str], str] = {}
        self._ends: dict[str, deque[PastQuestion]] = {}

    def add(self, records: Iterable[dict[str, Any]], asked: Mapping[tuple[str, str], str]) -> None:
        """Index ``records``; ``asked``: the titles of the questions they ask (:func:`titles`)."""
        for rec in records:
            key = (rec["sessionId"], rec["requestId"])
            users = joined(rec)
            if users:
                self._audience.setdefault(key, set()).update(users)
                if rec["event"] == "asked" and key in asked:
                    self._titles[key] = asked[key]
            elif rec["event"] in ENDS:
                ended = PastQuestion(rec, self._titles.pop(key, None))
                for user in self._audience.pop(key, ()):
                    self._ends.setdefault(user, deque(maxlen=HISTORY)).append(ended)

    def prune(self, front: int) -> None:
        """Forget the ends before seq ``front`` (retention removed their records), titles with them."""
        for user, ends in list(self._ends.items()):
            while ends and ends[0].record["seq"] < front:
                ends.popleft()
            if not ends:
                del self._ends[user]

    def of(self, user: str, front: int) -> list[PastQuestion]:
        """The user's ends kept in the trail (seq from ``front``), newest first."""
        return [e for e in reversed(self._ends.get(user, ())) if e.record["seq"] >= front]
