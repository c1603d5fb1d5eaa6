"""The answer link page's words (askd/web/link_page/*.json): one catalogue
per language of the inbox, the same keys and placeholders in each, and
every key the template and the handler use present."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from askd.server.http import link_approval, link_page
from askd.web import STATIC_DIR

PAGE = link_page.PAGE_DIR
CATALOGUES = {p.stem: json.loads(p.read_text(encoding="utf-8")) for p in sorted(PAGE.glob("*.json"))}
LANGUAGES = json.loads((STATIC_DIR / "languages.json").read_text(encoding="utf-8"))


def test_one_catalogue_per_language_of_the_inbox() -> None:
    assert set(CATALOGUES) == set(LANGUAGES["languages"])


@pytest.mark.parametrize("lang", sorted(CATALOGUES))
def test_same_keys_and_placeholders_as_english(lang: str) -> None:
    english = CATALOGUES["en"]
    assert set(CATALOGUES[lang]) == set(english)
    for key, text in CATALOGUES[lang].items():
        assert isinstance(text, str) and text, key
        assert set(re.findall(r"\{\w+\}", text)) == set(re.findall(r"\{\w+\}", english[key])), key


def test_every_key_used_exists() -> None:
    sources = "".join(
        Path(f).read_text(encoding="utf-8") for f in (PAGE / "page.html", link_page.__file__, link_approval.__file__)
    )
    used = set(re.findall(r"\bt\(\"([\w.]+)\"", sources))
    used |= set(re.findall(r'_page\(\s*\d+,\s*"([\w.]+)"', sources))  # headings
    assert used and used <= set(CATALOGUES["en"]), used - set(CATALOGUES["en"])
