"""Output for people: rich tables and short times."""

from __future__ import annotations

import re
import sys
from collections.abc import Iterable, Sequence
from datetime import datetime, timezone
from typing import Any

from rich.console import Console
from rich.markdown import Markdown
from rich.table import Table
from rich.text import Text

from askd.protocol import visible
from askd.web.markdown import parse

# C0 and C1 controls but newline and tab: an escape sequence in a question
# must not drive the reader's terminal.
_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")

#: Printed above what holds hidden characters (protocol sections 4 and 17).
HIDDEN_WARNING = f"! {visible.WARNING}"


def console() -> Console:
    # Piped output is not cut at 80 columns: ids must stay whole to be pasted.
    return Console(width=None if sys.stdout.isatty() else 200, highlight=False)


def table(columns: Sequence[str], rows: Iterable[Sequence[str]], no_wrap: Sequence[str] = ()) -> None:
    t = Table(box=None, header_style="bold", pad_edge=False)
    for name in columns:
        t.add_column(name, no_wrap=name in no_wrap, overflow="fold")
    for row in rows:
        t.add_row(*(Text(terminal_safe(cell)) for cell in row))  # user text is never rich markup
    console().print(t)


def terminal_safe(text: str) -> str:
    """Text as a terminal may print it: no control character (but newline
    and tab), each bidirectional or zero-width one shown as its mark
    (``⟨U+2067⟩``), so the line reads as it is."""
    return visible.reveal(_CONTROLS.sub("", text))


def warn_hidden(described: Iterable[dict[str, Any]]) -> None:
    """The warning line, when anything a person reads of ``described`` (pending questions) hides characters."""
    if any(visible.shows_hidden(d) for d in described):
        console().print(Text(HIDDEN_WARNING, style="bold yellow"))


class QuestionMarkdown(Markdown):
    """Question Markdown in a terminal, read as the page reads it: raw HTML
    is text and only http/https/mailto links are links (askd.web.markdown's
    parser), shown with their address rather than as terminal hyperlinks."""

    def __init__(self, text: str) -> None:
        super().__init__(terminal_safe(text), hyperlinks=False)
        self.parsed = parse(self.markup)


def one_line(text: str, limit: int = 100) -> str:
    """A Markdown text's first non-blank line, for a table cell."""
    lines = [line.strip() for line in terminal_safe(text).splitlines() if line.strip()]
    first = lines[0] if lines else ""
    if len(lines) > 1 or len(first) > limit:
        first = first[:limit].rstrip() + " …"
    return first


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
