"""``askd token revoke-all`` as the cluster holds it right now.

Each node keeps the revocation instant it last heard of (``Context.not_before``,
told by the store's stream on a shared store); an answer link or a one-time
code, each a single request, is checked against the store's own value too,
so a node that has not yet heard of a revocation another node just made
still refuses what it revoked."""

from __future__ import annotations

from askd.server.context import Context


async def not_before_now(ctx: Context) -> float:
    """The later of this node's ``auth.not_before`` and the store's; raises
    :class:`StoreUnavailable` when the store cannot say."""
    return max(ctx.not_before, await ctx.hub.not_before())
