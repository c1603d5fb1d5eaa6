"""What pending questions hold, and the budgets an ask is checked against.

A pending question holds one slot of askd's ``max_pending_total`` and its
encoded frame's bytes, counted against askd (``max_pending_bytes_total``),
its user (``max_pending_bytes_per_user``: the audience key, a team's own),
its agent (``max_pending_per_agent``, ``max_pending_bytes_per_agent``: the
asking token's ``sub``, every token without one counting as one agent) and
that agent's share of the user's bytes (``max_user_share_per_agent``), so
no agent token fills askd, or a person's inbox, alone (issue 29).

The registry keeps two :class:`Tally`s: what applied questions hold and what
asks being committed reserve; a check adds both. Each is a replica's count
on a shared store (every node applies every change), as the per-user
budget always was: see docs/security.md.
"""

from __future__ import annotations

from askd.core.errors import TooManyPending
from askd.core.records import Limits


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
        _less(self.users, user, size)
        held = self.agents[agent]
        held[0] -= 1
        held[1] -= size
        if held[0] <= 0:
            del self.agents[agent]
        _less(self.shares, (user, agent), size)

    def agent(self, agent: str | None) -> tuple[int, int]:
        """The agent's questions and bytes."""
        held = self.agents.get(agent)
        return (held[0], held[1]) if held is not None else (0, 0)


def _less(table: dict, key: object, size: int) -> None:
    left = table.get(key, 0) - size
    if left > 0:
        table[key] = left
    else:
        table.pop(key, None)


def check_count(limits: Limits, held: Tally, flying: Tally, agent: str | None) -> None:
    """Raise :class:`TooManyPending` when askd, or the agent, holds its cap of
    pending questions (those being committed count)."""
    total = held.n + flying.n
    if total >= limits.max_pending_total:
        raise TooManyPending(f"askd holds {total} pending questions (limit)")
    mine = held.agent(agent)[0] + flying.agent(agent)[0]
    if mine >= limits.max_pending_per_agent:
        raise TooManyPending(
            f"this agent already has {mine} pending questions (limits.max_pending_per_agent {limits.max_pending_per_agent})"
        )


def check_bytes(limits: Limits, held: Tally, flying: Tally, user: str, agent: str | None, size: int) -> None:
    """Raise :class:`TooManyPending` when a question of ``size`` bytes would
    take the user, the agent, the agent's share of the user, or askd past
    its byte budget."""
    limit = limits.max_pending_bytes_per_user
    mine = held.users.get(user, 0) + flying.users.get(user, 0)
    if mine + size > limit:
        raise TooManyPending(f"user {user} already has {mine} bytes of pending questions (limit {limit})")
    share = int(limit * limits.max_user_share_per_agent)
    mine = held.shares.get((user, agent), 0) + flying.shares.get((user, agent), 0)
    if mine + size > share:
        raise TooManyPending(
            f"this agent already has {mine} bytes of pending questions for user {user} "
            f"(its share of the user's budget: {share})"
        )
    limit = limits.max_pending_bytes_per_agent
    mine = held.agent(agent)[1] + flying.agent(agent)[1]
    if mine + size > limit:
        raise TooManyPending(f"this agent already has {mine} bytes of pending questions (limit {limit})")
    limit = limits.max_pending_bytes_total
    mine = held.size + flying.size
    if mine + size > limit:
        raise TooManyPending(f"askd holds {mine} bytes of pending questions (limit {limit})")
