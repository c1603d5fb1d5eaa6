"""The one place a delivery takes its once key in the store.

A delivery takes its once key before its first attempt: the node that takes
it sends it, and no other node, nor this one after a restart, sends it
again (a crash between the take and the send loses it rather than sending
it twice). Keys name what they guard (``OnceKey.key``): ``notify:<rid>:<step>``
for a question's webhook at an escalation step, ``remind:<rid>:r<k>`` for
its webhook at reminder k, ``mail:<rid>:<step>:<user>`` (``r<k>`` for a
reminder's) for one person's mail about it; each is kept until ``OnceKey.until``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from askd.channels.channel import OnceKey
    from askd.store import Store


async def take(store: Store, once: OnceKey) -> bool:
    """Whether this call is the first to take ``once``. Raises the store's
    ``StoreUnavailable``, having taken nothing."""
    # A store one daemon owns: this node sends every webhook, and sends it
    # again after a restart (the once key is the cluster's, not a record:
    # its success is the ``Notified`` record).
    if once.key.startswith("notify:") and not store.shared:
        return True
    return await store.once_keys.take(once.key, once.until)
