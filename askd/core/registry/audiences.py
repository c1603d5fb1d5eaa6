"""Audiences: whom a question is asked of (users, groups and escalation
steps), resolved live.

A question's owner is its audience's key (``records.audience_key``): a lone
user's id, or the entries of a team (users and ``group:G``). The groups and
the escalation steps taken decide who that is *now*, so it is resolved on
each use, never stored. :class:`Audiences` holds what that takes: the groups
and the pending questions whose audience is more than their one user (the
"team" questions). The registry asks it and sends what it answers; it sends
nothing itself.

It holds the away users too (``away.py``: their questions also go to
delegates): an audience that holds
one of them holds their delegates as well (groups resolved now, one level:
a delegate's own away does not pass it on), and a one-user question of an
away user is a "team" one while the away lasts. With nobody away, none of
this costs more than a test of an empty dict.
"""

from __future__ import annotations

from collections.abc import Iterable

from askd.core.away import Away
from askd.core.errors import InvalidRequest
from askd.core.records import GROUP_PREFIX, AskInput, Request, Session, audience_entries, is_team


class Audiences:
    def __init__(self) -> None:
        self.groups: dict[str, tuple[str, ...]] = {}  # group -> its members, sorted
        # The same members as sets: whether a user may answer is one lookup
        # per entry, not the whole audience resolved (60 us for 1,000 members).
        self._members: dict[str, frozenset[str]] = {}
        # Pending questions asked of more than one user or a group, or with
        # escalation steps: their audience is resolved from the groups live.
        self.team: dict[str, Request] = {}
        self.aways: dict[str, Away] = {}  # user -> their away

    # ---- who ------------------------------------------------------------

    def resolve(self, entries: Iterable[str]) -> set[str]:
        """The users ``entries`` name, with the groups as they are now, and
        the delegates of those of them who are away."""
        users: set[str] = set()
        for entry in entries:  # as ``_resolve``, inlined: a team's every push and end resolve it
            if entry.startswith(GROUP_PREFIX):
                users.update(self.groups.get(entry[len(GROUP_PREFIX) :], ()))
            else:
                users.add(entry)
        if self.aways:
            users |= self._delegates(users)
        return users

    def _delegates(self, users: set[str]) -> set[str]:
        """The delegates of the away users among ``users`` (groups resolved now)."""
        out: set[str] = set()
        for user in users.intersection(self.aways):
            out |= self._resolve(self.aways[user].delegates)
        return out

    def _resolve(self, entries: Iterable[str]) -> set[str]:
        """The users ``entries`` name, with the groups as they are now (no delegate)."""
        users: set[str] = set()
        for entry in entries:
            if entry.startswith(GROUP_PREFIX):
                users.update(self.groups.get(entry[len(GROUP_PREFIX) :], ()))
            else:
                users.add(entry)
        return users

    def of(self, req: Request) -> set[str]:
        """Who may see and answer the question now."""
        if req.request_id not in self.team:
            return {req.user_id}  # one user, never escalated: the common case
        return self.resolve(req.to)

    def holds(self, user_id: str, req: Request) -> bool:
        """Whether ``user_id`` is in the question's audience now (as
        ``user_id in of(req)``, without resolving it)."""
        if req.user_id == user_id:
            return True
        if req.request_id not in self.team:
            return False
        for entry in req.to:
            if entry.startswith(GROUP_PREFIX):
                if user_id in self._members.get(entry[len(GROUP_PREFIX) :], ()):
                    return True
            elif entry == user_id:
                return True
        return bool(self.aways) and user_id in self._delegates(self._resolve(req.to))

    def on_behalf(self, user_id: str | None, req: Request) -> str | None:
        """The away user a delegate acts for on the question (the first by
        id if several); None for an admin, for someone in the audience on
        their own (a delegate who is also asked answers as themself) and
        when nobody is away."""
        if not self.aways or user_id is None:
            return None
        own = self._resolve(req.to)
        if user_id in own:
            return None
        for user in sorted(own.intersection(self.aways)):
            if user_id in self._resolve(self.aways[user].delegates):
                return user
        return None

    def asked_of(self, user_id: str) -> list[Request]:
        """The team questions whose audience holds the user now."""
        return [r for r in self.team.values() if self.holds(user_id, r)]

    def may_subscribe(self, user_id: str, session: Session) -> bool:
        """In the audience of the session's first question (its owner, the
        groups as they are now) or of any of its pending questions."""
        if session.owner == user_id or (is_team(session.owner) and user_id in self._resolve(audience_entries(session.owner))):
            return True
        return any(r.pending and self.holds(user_id, r) for r in session.requests.values())

    def session_users(self, session: Session) -> set[str]:
        """Whom the session is for: its owner (the audience of its first
        question, the groups as they are now) and the audience of each of
        its pending questions."""
        users = self._resolve(audience_entries(session.owner))
        for req in session.requests.values():
            if req.pending and req.request_id in self.team:
                users |= self.of(req)
        return users

    def notify_users(self, req: Request) -> tuple[list[str], list[str]]:
        """For a webhook: the audience (sorted), and those whose presence
        ``only_offline`` looks at: the audience, or after an escalation step
        the users that step added (so a step reaches them even while an
        earlier member has a connection open). An away user is left out (their
        delegates are in)."""
        users = self.of(req)
        if self.aways:
            users.difference_update(self.aways)
        if not req.escalations:
            return sorted(users), sorted(users)
        before = self.resolve(self._entries_upto(req, req.escalations - 1))
        return sorted(users), sorted(users - before)

    @staticmethod
    def _entries_upto(req: Request, steps: int) -> list[str]:
        out = list(audience_entries(req.user_id))
        for _, entries in req.escalate[:steps]:
            out.extend(entries)
        return out

    def _unknown_groups(self, ask: AskInput) -> list[tuple[str, str]]:
        """The ``group:G`` entries of the ask this node holds no group for,
        each with its ``loc``."""
        if not ask.to and not ask.escalate:  # the usual ask, of one user: nothing to look up
            return []
        named = [(f"to.{i}", e) for i, e in enumerate(ask.to or ())]
        named += [(f"escalate.{i}.to.{j}", e) for i, (_, entries) in enumerate(ask.escalate) for j, e in enumerate(entries)]
        return [(loc, e) for loc, e in named if e.startswith(GROUP_PREFIX) and e[len(GROUP_PREFIX) :] not in self.groups]

    def names_unknown_group(self, ask: AskInput) -> bool:
        """Whether the ask names a group this node does not hold: on a shared
        store, perhaps one another node made a moment ago, so the hub catches
        up with the store before deciding the ask."""
        return bool(self._unknown_groups(ask))

    def check_entries(self, ask: AskInput) -> None:
        """Every ``group:G`` the ask names must exist (``400``, ``loc`` the entry)."""
        for loc, entry in self._unknown_groups(ask)[:1]:
            msg = f"no group {entry[len(GROUP_PREFIX):]!r}"
            raise InvalidRequest(f"{loc}: {msg}", [{"loc": loc, "msg": msg}])

    # ---- changes --------------------------------------------------------

    def restore_group(self, group: str, members: tuple[str, ...]) -> None:
        """Load a group kept by a store (before its questions)."""
        self._put(group, members)

    def _put(self, group: str, members: tuple[str, ...] | None) -> None:
        if members is None:
            self.groups.pop(group, None)
            self._members.pop(group, None)
        else:
            self.groups[group], self._members[group] = members, frozenset(members)

    def track(self, req: Request) -> None:
        """A pending question is registered: a team one is resolved live."""
        if is_team(req.user_id) or req.escalate:
            self.team[req.request_id] = req
        elif self.aways and req.user_id in self.aways:
            req.away = True  # its pushes name whose it is (Request.push_fields)
            self.team[req.request_id] = req

    def untrack(self, req: Request) -> None:
        """The question ended: its audience no longer changes."""
        self.team.pop(req.request_id, None)

    def set_group(self, group: str, members: tuple[str, ...] | None) -> list[tuple[Request, set[str], set[str]]]:
        """A group's members are now ``members`` (None: it is gone). Returns,
        for each pending question asked of it, the users it gained (who get
        it now) and those it lost (whose connections are told ``reassigned``)."""
        entry = GROUP_PREFIX + group
        if any(entry in away.delegates for away in self.aways.values()):  # a delegate group: any may follow
            naming = list(self.team.values())
        else:
            naming = [r for r in self.team.values() if entry in r.to]
        before = [self.of(r) for r in naming]
        self._put(group, members)
        out = []
        for req, was in zip(naming, before):
            now = self.of(req)
            out.append((req, now - was, was - now))
        return out

    def put_away(self, user: str, away: Away | None, theirs: Iterable[Request]) -> None:
        """The user's away is now ``away`` (None: over). ``theirs``: the
        pending questions whose audience holds them; those asked of them
        alone leave the fast path while it lasts (``team``), and come back
        to it after."""
        if away is None:
            self.aways.pop(user, None)
        else:
            self.aways[user] = away
        for req in theirs:
            if req.user_id == user:  # asked of them alone
                req.away = away is not None
                if away is not None:
                    self.team[req.request_id] = req
                elif not req.escalate:
                    self.team.pop(req.request_id, None)
