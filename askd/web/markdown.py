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

from askd.protocol import visible

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


# A tag of the renderer's output: its attribute values are escaped (no < or >
# in them), so what lies between two tags is text.
_TAG = re.compile(r"(<[^>]*>)")


def _badge(found: re.Match[str]) -> str:
    return f'<span class="hidden-char">{visible.mark(found.group())}</span>'


def reveal_html(html: str) -> str:
    """HTML askd rendered (``render``, or text it escaped) with each hidden
    character (``askd.protocol.visible``) as a badge in text, and as its
    mark inside a tag (a link's title): never there unseen."""
    if not visible.has_hidden(html):
        return html
    return "".join(
        visible.reveal(part) if part.startswith("<") else visible.HIDDEN_RE.sub(_badge, part) for part in _TAG.split(html)
    )


def shown(text: str) -> str:
    """Markdown source as a page shows it: ``render``, hidden characters as badges."""
    return reveal_html(render(text))


def shown_plain(text: str) -> str:
    """Plain text (a label, a name, JSON) as safe HTML, hidden characters as badges."""
    return reveal_html(escapeHtml(text))


def parse(text: str) -> list[Token]:
    """The tokens ``render`` renders (for other renderers, e.g. a terminal's)."""
    return _parser().parse(text)


# A sentence ends at . ! ? (and …) before a space and a word that is not
# lower case ("e.g. this" goes on), or at a full-width 。！？ anywhere.
_SENTENCE_END = re.compile(r"[.!?…](?=\s+(?![a-z]))|[。！？]")


def _inline_text(tokens: Sequence[Token]) -> str:
    out: list[str] = []
    for t in tokens:
        if t.type in ("text", "code_inline", "html_inline"):
            out.append(t.content)
        elif t.type == "image":
            out.append(_inline_text(t.children or []))
        elif t.type in ("softbreak", "hardbreak"):
            out.append("\n")
    return "".join(out)


def plain(text: str, limit: int | None = None) -> str:
    """A one-line plain-text summary of Markdown, where markup cannot be
    shown (a mail's Subject, an HTML ``<title>``):
    the first line of the first paragraph or heading (code blocks, rules and
    raw HTML skipped), cut after its first sentence, with no markup (a link
    keeps its text, an image its alt text); at most ``limit`` characters,
    ending in "…" when cut. Empty when the text has no such line."""
    line = ""
    for token in parse(text):
        if token.type == "inline":
            line = _inline_text(token.children or []).strip().split("\n", 1)[0].strip()
            if line:
                break
    end = _SENTENCE_END.search(line)
    if end is not None:
        line = line[: end.end()]
    line = " ".join(line.split())
    if limit is not None and len(line) > limit:
        line = line[: limit - 1].rstrip() + "…"
    return line
