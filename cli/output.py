"""Output for people: rich tables and short times."""

from __future__ import annotations

import sys
from collections.abc import Iterable, Sequence
from datetime import datetime, timezone

from rich.console import Console
from rich.table import Table
from rich.text import Text


def console() -> Console:
    # Piped output is not cut at 80 columns: ids must stay whole to be pasted.
    return Console(width=None if sys.stdout.isatty() else 200, highlight=False)


def table(columns: Sequence[str], rows: Iterable[Sequence[str]], no_wrap: Sequence[str] = ()) -> None:
    t = Table(box=None, header_style="bold", pad_edge=False)
    for name in columns:
        t.add_column(name, no_wrap=name in no_wrap, overflow="fold")
    for row in rows:
        t.add_row(*(Text(cell) for cell in row))  # user text is never rich markup
    console().print(t)


def parse_time(iso: str) -> datetime | None:
    try:
        return datetime.fromisoformat(iso.replace("Z", "+00:00"))
    except (ValueError, AttributeError):
        return None


def duration(seconds: float) -> str:
    """``42s``, ``3m 5s``, ``2h 4m``, ``3d 1h``."""
    s = int(max(0, seconds))
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m {s % 60}s"
    if s < 86400:
        return f"{s // 3600}h {s % 3600 // 60}m"
    return f"{s // 86400}d {s % 86400 // 3600}h"


def ago(iso: str) -> str:
    t = parse_time(iso)
    return duration((datetime.now(timezone.utc) - t).total_seconds()) + " ago" if t else iso


def until(iso: str) -> str:
    t = parse_time(iso)
    return "in " + duration((t - datetime.now(timezone.utc)).total_seconds()) if t else iso


def plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"
