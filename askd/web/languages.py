"""The person's language for pages askd renders itself, from Accept-Language.

The same choice as the inbox page's ``static/i18n.js`` makes from
``navigator.languages``: RFC 4647 lookup over the languages and aliases of
``static/languages.json`` (``zh``, ``zh-Hans``, ``zh-SG`` mean ``zh-CN``),
and the default (English) when nothing matches.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import cache
from typing import Any

from askd.protocol import codec
from askd.web import STATIC_DIR


@cache
def _config() -> dict[str, Any]:
    config: dict[str, Any] = codec.loads((STATIC_DIR / "languages.json").read_text(encoding="utf-8"))
    return config


def pick_language(wanted: Iterable[str]) -> str:
    """The supported language for BCP 47 tags, most wanted first."""
    config = _config()
    supported = {tag.lower(): tag for tag in config["languages"]}
    aliases: dict[str, str] = config["aliases"]
    for tag in wanted:
        lookup = tag.strip().lower()
        while lookup:
            if lookup in supported:
                return supported[lookup]
            if lookup in aliases:
                return aliases[lookup]
            lookup = lookup.rpartition("-")[0]
    return str(config["default"])


def from_accept_language(header: str | None) -> str:
    """The language for an ``Accept-Language`` header (q-values honoured)."""
    ranked: list[tuple[float, int, str]] = []
    for i, item in enumerate((header or "").split(",")):
        tag, _, params = item.partition(";")
        tag = tag.strip()
        q = 1.0
        name, _, value = params.strip().partition("=")
        if name.strip().lower() == "q":
            try:
                q = float(value)
            except ValueError:
                continue
        if tag and tag != "*" and q > 0:
            ranked.append((-q, i, tag))
    return pick_language(tag for _, _, tag in sorted(ranked))
