"""Question Markdown to HTML on the server, for pages askd renders itself.

The same rules as the inbox page's ``static/markdown.js`` (markdown-it, of
which markdown-it-py is the port), so one text gives one HTML on both:
CommonMark with tables and strikethrough, raw HTML shown as text, links only
to http, https and mailto (new tab, no opener, no referrer), images as links
that are never loaded, and ``diff`` code blocks with their lines marked.
Both renderers are checked against tests/web/markdown_cases.json.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import cache
from typing import Any

from markdown_it import MarkdownIt
from markdown_it.common.utils import escapeHtml
from markdown_it.token import Token

_SAFE_URL = re.compile(r"^(?:https?|mailto):", re.IGNORECASE)
LINK_REL = "noopener noreferrer"


def _safe_link(url: str) -> bool:
    return bool(_SAFE_URL.match(url.strip()))


def _diff_line(line: str) -> str:
    if line.startswith(("+++", "---")):
        kind = "diff-file"
    elif line.startswith("+"):
        kind = "diff-add"
    elif line.startswith("-"):
        kind = "diff-del"
    elif line.startswith("@@"):
        kind = "diff-hunk"
    else:
        return escapeHtml(line)
    return f'<span class="{kind}">{escapeHtml(line)}</span>'


def _highlight(content: str, lang: str, _attrs: str) -> str:
    # "" lets markdown-it escape the text as it is.
    if lang.lower() != "diff":
        return ""
    return "\n".join(_diff_line(line) for line in content.split("\n"))


def _link_open(self: Any, tokens: Sequence[Token], idx: int, options: Any, env: Any) -> str:
    tokens[idx].attrSet("target", "_blank")
    tokens[idx].attrSet("rel", LINK_REL)
    return self.renderToken(tokens, idx, options, env)


def _cell_open(self: Any, tokens: Sequence[Token], idx: int, options: Any, env: Any) -> str:
    # Alignment comes as style="text-align:...", which the page's CSP (no
    # inline style) refuses: a class says it instead.
    token = tokens[idx]
    style = token.attrs.pop("style", None)
    if isinstance(style, str):
        token.attrJoin("class", "align-" + style.removeprefix("text-align:"))
    return self.renderToken(tokens, idx, options, env)


def _image(self: Any, tokens: Sequence[Token], idx: int, options: Any, env: Any) -> str:
    token = tokens[idx]
    src = str(token.attrGet("src") or "")
    alt = self.renderInlineAsText(token.children or [], options, env) or src
    return (
        f'<a href="{escapeHtml(src)}" target="_blank" rel="{LINK_REL}" class="md-image">'
        f"{escapeHtml(alt)}</a>"
    )


@cache
def _parser() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": False, "highlight": _highlight}).enable(["table", "strikethrough"])
    md.validateLink = _safe_link  # type: ignore[method-assign]
    md.add_render_rule("link_open", _link_open)
    md.add_render_rule("th_open", _cell_open)
    md.add_render_rule("td_open", _cell_open)
    md.add_render_rule("image", _image)
    return md


def render(text: str) -> str:
    """Markdown source to safe HTML (no script, nothing that loads)."""
    return _parser().render(text)


def parse(text: str) -> list[Token]:
    """The tokens ``render`` renders (for other renderers, e.g. a terminal's)."""
    return _parser().parse(text)
