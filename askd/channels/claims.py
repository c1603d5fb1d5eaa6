"""The one place a delivery is claimed in the store.

A delivery is claimed once, before its first attempt: the node whose claim
wins sends it, and no other node, nor this one after a restart, sends it
again (a crash between the claim and the send loses it rather than sending
it twice). Keys name what is claimed (``Claim.key``): ``notify:<rid>:<step>``
for a question's webhook at an escalation step, ``remind:<rid>:r<k>`` for
its webhook at reminder k, ``mail:<rid>:<step>:<user>`` (``r<k>`` for a
reminder's) for one person's mail about it; each is kept until ``Claim.until``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from askd.channels.channel import Claim
    from askd.store import Store


async def claim(store: Store, c: Claim) -> bool:
    """Whether this call is the first to claim ``c``. Raises the store's
    ``StoreUnavailable``, having claimed nothing."""
    # A store one daemon owns: this node sends every webhook, and sends it
    # again after a restart (the claim is the cluster's, not a record: its
    # success is the ``Notified`` record).
    if c.key.startswith("notify:") and not store.shared:
        return True
    return await store.claims.claim(c.key, c.until)
