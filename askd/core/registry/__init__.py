"""The registry and its parts: the engine that decides and applies changes.

``registry.py`` holds :class:`Registry`, a front over its parts, each
owning its state: the session book (``sessions.py``), the connections
(``connections.py``), the reservations of asks in flight
(``reservations.py``) and what pending questions hold (``budgets.py``),
who each question is for (``audiences.py``), the deadlines and their kinds
(``deadlines.py``), the decisions (``decisions.py``), what can change when
(``rules.py``) and what each change does (``effects.py``). The records it
works on stay beside it, at the top of ``askd.core``.

``Registry`` is loaded on first use, not when a part is imported: the
table of deadline kinds and the rule table run without an engine (a store
that keeps none runs the guards), and importing them loads no registry.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from askd.core.registry.registry import Registry

__all__ = ["Registry"]


def __getattr__(name: str) -> Any:
    if name == "Registry":
        from askd.core.registry.registry import Registry

        return Registry
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
