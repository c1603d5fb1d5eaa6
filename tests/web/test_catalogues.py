"""The page's words live in its catalogues (static/i18n/*.json): every
catalogue has every key, every key the page uses exists, and the page's
HTML holds no text of its own outside them."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser

import pytest

from askd.web import STATIC_DIR

CATALOGUES = {p.stem: json.loads(p.read_text(encoding="utf-8")) for p in sorted((STATIC_DIR / "i18n").glob("*.json"))}
LANGUAGES = json.loads((STATIC_DIR / "languages.json").read_text(encoding="utf-8"))

# Keys the scripts build from a variable: t(`note.${reason}`) and the like.
BUILT_KEYS = [
    *(f"note.{r}" for r in ("answered", "answeredHere", "timeout", "cancelled", "reassigned", "not_pending", "gone")),
    *(f"note.declinedBy{who}{why}" for who in ("", "Admin") for why in ("", "Reason")),
    "panel.sending", "panel.declining",  # app.js's sendAndWait(panel, key, ...)
    *(f"conn.{s}" for s in ("connecting", "connected", "waiting", "stopped")),
    *(f"alerts.{k}{help}" for k in ("on", "off", "blocked") for help in ("", "Help")),
    *(f"history.status.{s}" for s in ("answered", "declined", "timeout", "cancelled", "withdrawn")),  # history.js
    *(f"history.via.{v}" for v in ("ws", "link", "mcp", "admin")),
]


def used_keys() -> set[str]:
    keys = set(BUILT_KEYS)
    for script in STATIC_DIR.glob("*.js"):
        keys |= set(re.findall(r"\bt(?:Nodes)?\('([\w.]+)'", script.read_text(encoding="utf-8")))
    html = (STATIC_DIR / "index.html").read_text(encoding="utf-8")
    keys |= set(re.findall(r'data-i18n(?:-[\w-]+)?="([\w.]+)"', html))
    return keys


def test_one_catalogue_per_language() -> None:
    assert set(CATALOGUES) == set(LANGUAGES["languages"]) >= {"en", "zh-CN"}
    assert LANGUAGES["default"] == "en"
    assert set(LANGUAGES["aliases"].values()) <= set(CATALOGUES)


@pytest.mark.parametrize("lang", sorted(CATALOGUES))
def test_every_catalogue_has_every_key(lang: str) -> None:
    assert set(CATALOGUES[lang]) == set(CATALOGUES["en"])


@pytest.mark.parametrize("lang", sorted(CATALOGUES))
def test_texts_and_plurals_are_well_formed(lang: str) -> None:
    for key, entry in CATALOGUES[lang].items():
        texts = [entry] if isinstance(entry, str) else list(entry.values())
        if isinstance(entry, dict):
            assert "other" in entry, key  # Intl.PluralRules' fallback category
        english = CATALOGUES["en"][key]
        english_text = english if isinstance(english, str) else english["other"]
        for text in texts:
            assert isinstance(text, str) and text, key
            # The same placeholders as English: a translation drops none.
            assert set(re.findall(r"\{\w+\}", text)) == set(re.findall(r"\{\w+\}", english_text)), key


def test_every_key_the_page_uses_exists() -> None:
    used = used_keys()
    assert len(used) > 40  # the scan itself found the page's keys
    missing = used - set(CATALOGUES["en"])
    assert not missing, missing


class _LooseText(HTMLParser):
    """Text in index.html outside an element whose text the page fills."""

    FILLED = ("data-i18n", "data-slot")

    def __init__(self) -> None:
        super().__init__()
        self.stack: list[bool] = []
        self.loose: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in {"meta", "link", "img", "input", "br"}:
            return
        filled = tag == "noscript" or any(name in self.FILLED for name, _ in attrs)
        self.stack.append(filled or (bool(self.stack) and self.stack[-1]))

    def handle_endtag(self, tag: str) -> None:
        if tag not in {"meta", "link", "img", "input", "br"} and self.stack:
            self.stack.pop()

    def handle_data(self, data: str) -> None:
        if data.strip() and not (self.stack and self.stack[-1]):
            self.loose.append(data.strip())


def test_the_page_has_no_text_outside_the_catalogues() -> None:
    parser = _LooseText()
    parser.feed((STATIC_DIR / "index.html").read_text(encoding="utf-8"))
    assert parser.loose == ["askd"]  # the product's name, beside the logo
