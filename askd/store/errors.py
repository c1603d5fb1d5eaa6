"""How a store fails: at start (``StoreError``) or while askd runs (``StoreUnavailable``)."""

from __future__ import annotations


class StoreError(Exception):
    """The store cannot be used at all (at start): one line naming it."""


class StoreUnavailable(Exception):
    """The store failed while running (disk full, locked, unreachable).
    Nothing was written; the caller's change must not be applied."""
