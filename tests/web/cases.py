"""The shared Markdown inputs (markdown_cases.json): ordinary Markdown and
hostile text. The server's renderer is checked on them here, the page's
against the server's in tests/system/browser/test_rich.py."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from pathlib import Path

_CASES = json.loads((Path(__file__).with_name("markdown_cases.json")).read_text(encoding="utf-8"))
CASES: list[str] = _CASES["cases"]
HOSTILE: list[str] = _CASES["hostile"]


class _Text(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []

    def handle_data(self, data: str) -> None:
        self.parts.append(data)


def shown_text(html: str) -> str:
    """The text a reader sees in rendered HTML, whitespace collapsed."""
    parser = _Text()
    parser.feed(html)
    parser.close()
    return squash("".join(parser.parts))


def squash(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()
