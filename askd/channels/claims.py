"""The one place a delivery is claimed in the store.

A delivery is claimed once, before its first attempt: the node whose claim
wins sends it, and no other node, nor this one after a restart, sends it
again (a crash between the claim and the send loses it rather than sending
it twice). Keys name what is claimed (``Claim.key``): ``notify:<rid>:<step>``
for a question's webhook at an escalation step, ``mail:<rid>:<step>:<user>``
for one person's mail about it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from askd.channels.channel import Claim
    from askd.store import Store


async def claim(store: Store, c: Claim) -> bool:
    """Whether this call is the first to claim ``c``. Raises the store's
    ``StoreUnavailable``, having claimed nothing.

    Today's store methods, which know two kinds; once stores have
    ``claims.claim(key, until)`` this becomes
    ``await store.claims.claim(c.key, c.until)``, for any kind, except
    that a webhook's claim is the cluster's only: on a store one daemon
    owns it always wins, so a webhook not delivered before a restart is
    sent after it (its success is the ``Notified`` record)."""
    kind = c.key.partition(":")[0]
    if kind == "notify":
        return await store.claim_notify(c.req)
    if kind == "mail" and c.user is not None:
        return c.user in await store.claim_mails(c.req, c.step, [c.user])
    raise ValueError(f"no store claim for {c.key!r} yet")
