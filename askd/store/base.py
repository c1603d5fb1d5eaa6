"""The one store interface the daemon's hub drives, whichever store it is.

A store makes the core's changes durable and reports which took effect; it
never touches the registry (only the core restores what it loaded, only the
hub applies). It is a change log (``parts.ChangeLog``) with four small
parts: ``once_keys``, ``directory``, ``posts`` and ``cluster`` (``parts.py``). Two
capabilities say what it is: ``durable`` (it survives the process) and
``shared`` (several daemons use it as one askd).
"""

from __future__ import annotations

from typing import Protocol

from askd.store.errors import StoreError, StoreUnavailable
from askd.store.parts import AuditTrail, ChangeLog, Cluster, Directory, OnceKeys, Posts, StoreListener

__all__ = ["Store", "StoreError", "StoreListener", "StoreUnavailable"]


class Store(ChangeLog, Protocol):
    once_keys: OnceKeys
    directory: Directory
    posts: Posts
    cluster: Cluster
    audit: AuditTrail | None  # None: the store keeps no audit trail (never probed with getattr)
