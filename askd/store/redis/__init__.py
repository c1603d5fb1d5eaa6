"""``store = "redis://..."``: state shared by every daemon pointed at it
(``store.py`` says how; the Lua steps are data files beside it)."""

from askd.store.redis.store import COMMIT, RedisStore
from askd.store.redis.presence import BEAT, FORGET_NODE, Presence

__all__ = ["BEAT", "COMMIT", "FORGET_NODE", "Presence", "RedisStore"]
