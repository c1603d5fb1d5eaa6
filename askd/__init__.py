"""askd: lets an AI agent ask a human a question and wait for the answer,
over WebSocket links that may drop at any time."""

from __future__ import annotations

from typing import Any


def __getattr__(name: str) -> Any:
    # ``__version__`` read from the installed metadata when first asked for:
    # importlib.metadata costs every import of askd (``askd hook``'s start
    # among them) some 20 ms it rarely needs.
    if name == "__version__":
        from importlib.metadata import PackageNotFoundError, version

        try:
            value = version("askd")
        except PackageNotFoundError:  # running from a source tree that is not installed
            value = "0.0.0+unknown"
        globals()["__version__"] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
