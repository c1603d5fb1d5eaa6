"""The root's ``--url``, ``--admin-url``, ``--token`` and ``--cacert``
(``askd --url U ask ...``), kept for the command that runs next; a
command's own option wins over them. No Typer here: ``askd hook``'s fast
start reads them too (as given: none)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass
class GlobalOptions:
    url: str | None = None
    admin_url: str | None = None
    token: str | None = None
    cacert: Path | None = None


_globals_now = GlobalOptions()


def set_global_options(options: GlobalOptions) -> GlobalOptions:
    global _globals_now
    _globals_now = options
    return options


def global_options() -> GlobalOptions:
    return _globals_now
