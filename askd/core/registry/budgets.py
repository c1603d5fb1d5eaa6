"""What pending questions hold, and the budgets an ask is checked against.

A pending question holds one slot of askd's ``max_pending_total`` and its
encoded frame's bytes, counted against askd (``max_pending_bytes_total``),
its user (``max_pending_bytes_per_user``: the audience key, a team's own),
its agent (``max_pending_per_agent``, ``max_pending_bytes_per_agent``: the
asking token's ``sub``, every token without one counting as one agent) and
that agent's share of the user's bytes (``max_user_share_per_agent``), so
no agent token fills askd, or a person's inbox, alone
(docs/decisions.md, "Budgets per agent").

The registry keeps one :class:`Tally`: what pending questions hold, and what
asks being committed reserve (an ask is counted when it is prepared, taken
back if its commit fails, and stays counted when it is applied). It is a
replica's count
on a shared store (every node applies every change), as the per-user
budget always was: see docs/security.md. Every ask goes through here
twice and every end once, so the code is written flat, with no helper
calls (docs/performance.md: a Python call costs about 1k instructions).
"""

from __future__ import annotations

from askd.core.errors import TooManyPending
from askd.core.records import Limits

_NONE = (0, 0)  # an agent with nothing pending: no questions, no bytes


class Tally:
    """Pending questions counted in all, by user (bytes), by agent
    (questions and bytes) and by user and agent (bytes). Entries at zero
    leave their table, which holds only those with something pending."""

    __slots__ = ("n", "size", "users", "agents", "shares")

    def __init__(self) -> None:
        self.n = 0  # questions
        self.size = 0  # bytes of their frames
        self.users: dict[str, int] = {}  # user -> bytes
        self.agents: dict[str | None, list[int]] = {}  # agent -> [questions, bytes]
        self.shares: dict[tuple[str, str | None], int] = {}  # (user, agent) -> bytes

    def add(self, user: str, agent: str | None, size: int) -> None:
        self.n += 1
        self.size += size
        users = self.users
        users[user] = users.get(user, 0) + size
        held = self.agents.get(agent)
        if held is None:
            self.agents[agent] = [1, size]
        else:
            held[0] += 1
            held[1] += size
        shares, key = self.shares, (user, agent)
        shares[key] = shares.get(key, 0) + size

    def take(self, user: str, agent: str | None, size: int) -> None:
        """Take back what ``add`` counted for one question."""
        self.n -= 1
        self.size -= size
        users = self.users
        left = users.get(user, 0) - size
        if left > 0:
            users[user] = left
        else:
            users.pop(user, None)
        held = self.agents[agent]
        held[0] -= 1
        held[1] -= size
        if held[0] <= 0:
            del self.agents[agent]
        shares, key = self.shares, (user, agent)
        left = shares.get(key, 0) - size
        if left > 0:
            shares[key] = left
        else:
            shares.pop(key, None)


def check_count(limits: Limits, held: Tally, agent: str | None) -> None:
    """Raise :class:`TooManyPending` when askd, or the agent, holds its cap of
    pending questions."""
    if held.n >= limits.max_pending_total:
        raise TooManyPending(f"askd holds {held.n} pending questions (limit)")
    mine = held.agents.get(agent, _NONE)[0]
    if mine >= limits.max_pending_per_agent:
        raise TooManyPending(
            f"this agent already has {mine} pending questions (limits.max_pending_per_agent {limits.max_pending_per_agent})"
        )


def check_bytes(limits: Limits, held: Tally, user: str, agent: str | None, size: int) -> None:
    """Raise :class:`TooManyPending` when a question of ``size`` bytes would
    take the user, the agent's share of the user, the agent, or askd past
    its byte budget."""
    in_user, in_share, in_agent = held.users.get(user, 0), held.shares.get((user, agent), 0), held.agents.get(agent, _NONE)[1]
    in_all = held.size
    limit = limits.max_pending_bytes_per_user
    if in_user + size > limit:
        raise TooManyPending(f"user {user} already has {in_user} bytes of pending questions (limit {limit})")
    share = int(limit * limits.max_user_share_per_agent)
    if in_share + size > share:
        raise TooManyPending(
            f"this agent already has {in_share} bytes of pending questions for user {user} "
            f"(its share of the user's budget: {share})"
        )
    limit = limits.max_pending_bytes_per_agent
    if in_agent + size > limit:
        raise TooManyPending(f"this agent already has {in_agent} bytes of pending questions (limit {limit})")
    limit = limits.max_pending_bytes_total
    if in_all + size > limit:
        raise TooManyPending(f"askd holds {in_all} bytes of pending questions (limit {limit})")
