"""What can change when: every kind of change, its guard and its effect, in one table.

Everything that changes askd's state machine is here (``h11``'s rule: the
state machine lives in one file). Each row of :data:`RULES` says, for one
kind of change (``changes.py``):

- ``guard``: whether it takes effect, read from the :class:`Row` it is about
  as it is now (None: no such row). The lifecycle is part of it: an
  ``Ended`` takes effect by a move of :data:`~askd.core.lifecycle.TRANSITIONS`,
  and every other question guard's "still open" is :data:`OPEN`, the
  states that table has moves out of (``pending``);
- ``after``: the row it leaves (None: none), so a batch is checked change by
  change as if each before it had been applied (:func:`taking`);
- ``effect``: what the engine does when it takes effect, named by its
  :class:`Effects` method; ``otherwise``: what it does when it does not.

The registry applies a change with this table (``Registry.apply``) and
reports what a batch would take with it (``Registry.taking``); a store that
keeps no engine can call :func:`takes` and :func:`taking` on rows of its own.
SQLite's ``commit`` and Redis's ``commit.lua`` say the same in SQL and Lua
(``tests/store/test_take_effect.py`` holds all of them to it).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from operator import attrgetter
from typing import Any, Protocol

from askd.core.away import Away
from askd.core.changes import (
    Approved, Asked, AwayEnded, AwaySet, Change, Ended, Escalated, Extended, Forgot, GroupDeleted, GroupSet, Notified,
)
from askd.core.lifecycle import TRANSITIONS, Status
from askd.core.records import Request

#: A group's row: its members (sorted, de-duplicated).
Members = tuple[str, ...]


class Row(Protocol):
    """What a guard reads of the question a change is about: a ``Request``,
    a :class:`RowState`, or a store's own row."""

    @property
    def status(self) -> Status: ...
    @property
    def expires_at(self) -> float: ...
    @property
    def escalations(self) -> int: ...  # escalation steps taken
    @property
    def notified(self) -> bool: ...  # a webhook delivery succeeded
    @property
    def approvals(self) -> int: ...  # an action's approvals given (0 for questions)


class Rows(Protocol):
    """Where the rows are: the registry, or a store's own state."""

    def get(self, session_id: str, request_id: str) -> Row | None: ...
    def group(self, name: str) -> Members | None: ...
    def away(self, user: str) -> Any | None: ...  # a user's away (``away.Away``: its ``until``), None: not away


@dataclass(frozen=True, slots=True)
class RowState:
    """A question's row as a batch left it, before anything is applied."""

    status: Status
    expires_at: float
    escalations: int = 0
    notified: bool = False
    approvals: int = 0

    @classmethod
    def of(cls, row: Row) -> RowState:
        return cls(row.status, row.expires_at, row.escalations, row.notified, row.approvals)


class Effects(Protocol):
    """What the engine does as a change takes effect (``effects.Apply``), each
    called with the row the change is about (the engine's ``Request``, or
    the group's members) and the change."""

    def take_ask(self, row: None, change: Asked) -> None: ...
    def refuse_ask(self, row: Request, change: Asked) -> None: ...  # known already: only its reservation goes
    def end(self, row: Request, change: Ended) -> None: ...
    def approve(self, row: Request, change: Approved) -> None: ...
    def extend(self, row: Request, change: Extended) -> None: ...
    def escalate(self, row: Request, change: Escalated) -> None: ...
    def mark_notified(self, row: Request, change: Notified) -> None: ...
    def forget(self, row: Request, change: Forgot) -> None: ...
    def set_group(self, row: Members | None, change: GroupSet | GroupDeleted) -> None: ...
    def set_away(self, row: Any | None, change: AwaySet | AwayEnded) -> None: ...


class UnknownChange(TypeError):
    """A change of a kind the table has no row for: a bug in the caller."""


#: A question's states with moves out (lifecycle.TRANSITIONS): pending,
#: the one state every question guard below reads as "still open".
OPEN: frozenset[Status] = frozenset(source for source, _ in TRANSITIONS)


@dataclass(frozen=True, slots=True)
class Rule:
    """One kind of change: the row it is about, when it takes effect, what
    row it leaves, and what the engine does."""

    kind: type
    # The row it is about: its key (a question's (session_id, request_id), a
    # group's (name,)), found with ``Rows.get`` or ``Rows.group``.
    key: Callable[[Any], tuple[str, ...]]
    lookup: str  # "get", "group" or "away"
    guard: Callable[[Any, Any], bool]  # (change, row or None) -> takes effect
    after: Callable[[Any, Any], Any]  # (change, row) -> the row it leaves (None: none)
    effect: str  # the Effects method applying it, called (row, change)
    otherwise: str | None = None  # the Effects method called (row, change) when it does not take effect


_question = attrgetter("session_id", "request_id")
_asked = attrgetter("request.session_id", "request.request_id")


def _group(change: GroupSet | GroupDeleted) -> tuple[str]:
    return (change.group,)


def _user(change: AwaySet | AwayEnded) -> tuple[str]:
    return (change.user,)


def _ends(c: Ended, row: Row | None) -> bool:
    """An end takes effect by a move the lifecycle has; the approval that
    completes a quorum, only with the count of approvals it was decided
    against (``counted``)."""
    return row is not None and (row.status, c.trigger) in TRANSITIONS and (c.counted is None or row.approvals == c.counted)


def _ended(c: Ended, row: Row) -> RowState:
    approvals = row.approvals if c.counted is None else c.counted + 1
    return replace(RowState.of(row), status=TRANSITIONS[(row.status, c.trigger)], approvals=approvals)


RULES: dict[type, Rule] = {
    rule.kind: rule
    for rule in (
        # A new question: only if no row has its id (not asked, nor still kept).
        Rule(Asked, _asked, "get", lambda c, row: row is None,
             lambda c, row: RowState.of(c.request), "take_ask", otherwise="refuse_ask"),
        # It ends: only by a move the lifecycle has (from pending, once);
        # an action's last approval, only against the count it was decided with.
        Rule(Ended, _question, "get", _ends, _ended, "end"),
        # An action's approval short of its quorum: while open, with the
        # count of approvals it was decided against (compare and set).
        Rule(Approved, _question, "get",
             lambda c, row: row is not None and row.status in OPEN and row.approvals == c.counted,
             lambda c, row: replace(RowState.of(row), approvals=c.counted + 1), "approve"),
        # Its deadline moves: while open, from the deadline it was decided
        # against (of two extensions at once, one applies).
        Rule(Extended, _question, "get",
             lambda c, row: row is not None and row.status in OPEN and row.expires_at == c.previous,
             lambda c, row: replace(RowState.of(row), expires_at=c.expires_at), "extend"),
        # An escalation step: while open, once per step.
        Rule(Escalated, _question, "get",
             lambda c, row: row is not None and row.status in OPEN and row.escalations < c.step,
             lambda c, row: replace(RowState.of(row), escalations=c.step), "escalate"),
        # A webhook delivery succeeded: marks an open question only (again is fine).
        Rule(Notified, _question, "get", lambda c, row: row is not None and row.status in OPEN,
             lambda c, row: replace(RowState.of(row), notified=True), "mark_notified"),
        # Its retention is over: an ended question kept is dropped.
        Rule(Forgot, _question, "get", lambda c, row: row is not None and row.status not in OPEN,
             lambda c, row: None, "forget"),
        # A group's members: a set always takes (the last stored wins) ...
        Rule(GroupSet, _group, "group", lambda c, row: True, lambda c, row: c.members, "set_group"),
        # ... a delete only of a group held (of two nodes deleting it, one answers 404).
        Rule(GroupDeleted, _group, "group", lambda c, row: row is not None, lambda c, row: None, "set_group"),
        # A user's away: a set always takes (the last stored wins) ...
        Rule(AwaySet, _user, "away", lambda c, row: True, lambda c, row: Away(c.until, c.delegates), "set_away"),
        # ... an end only of an away held, and its deadline's only at the
        # ``until`` it was scheduled for (an away set again since goes on).
        Rule(AwayEnded, _user, "away",
             lambda c, row: row is not None and (c.until is None or row.until == c.until),
             lambda c, row: None, "set_away"),
    )
}


def rule_of(change: Change) -> Rule:
    """The change's row of the table; :class:`UnknownChange` if none."""
    try:
        return RULES[type(change)]
    except KeyError:
        raise UnknownChange(f"no rule for a change of kind {type(change).__name__}") from None


def takes(change: Change, row: Row | Members | None) -> bool:
    """Whether ``change`` takes effect on ``row`` (None: there is none): the
    question (or, for a group change, the group's members) it is about."""
    return bool(rule_of(change).guard(change, row))


def after(change: Change, row: Row | Members | None) -> RowState | Members | None:
    """The row ``change`` leaves, taking effect on ``row`` (None: none left)."""
    result: RowState | Members | None = rule_of(change).after(change, row)
    return result


def taking(rows: Rows, changes: Sequence[Change]) -> list[Change]:
    """The changes that take effect applied in this order, changing nothing:
    each is checked on its row as the changes before it in the batch left
    it (``rows`` hold them as they were before the batch)."""
    seen: dict[tuple[str, ...], Any] = {}  # key -> the row as the batch left it
    out: list[Change] = []
    for change in changes:
        rule = rule_of(change)
        key = rule.key(change)
        row = seen[key] if key in seen else getattr(rows, rule.lookup)(*key)
        if rule.guard(change, row):
            seen[key] = rule.after(change, row)
            out.append(change)
    return out


@dataclass(frozen=True, slots=True)
class View:
    """Rows as two lookups (an engine's own, bound once)."""

    get: Callable[[str, str], Any]
    group: Callable[[str], Members | None]
    away: Callable[[str], Any]


#: One kind's rule bound to an engine: (key, lookup, guard, effect, otherwise).
Bound = tuple[
    Callable[[Any], tuple[str, ...]], Callable[..., Any], Callable[[Any, Any], bool],
    Callable[[Any, Any], None], Callable[[Any, Any], None] | None,
]


def bind(effects: Effects, rows: Rows) -> dict[type, Bound]:
    """The table bound to one engine, by kind: what ``Registry.apply`` runs
    (``row = lookup(*key(change))``, then ``guard``, then ``effect`` or
    ``otherwise``), looked up once per change."""
    return {
        kind: (
            rule.key, getattr(rows, rule.lookup), rule.guard, getattr(effects, rule.effect),
            None if rule.otherwise is None else getattr(effects, rule.otherwise),
        )
        for kind, rule in RULES.items()
    }
