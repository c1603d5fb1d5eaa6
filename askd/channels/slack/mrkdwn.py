"""Question Markdown as Slack's mrkdwn, for the ``slack`` webhook format.

Read with the same parser as the page (``askd.web.markdown``), so a link
the page refuses stays text here too. What mrkdwn has (bold, italics,
strikethrough, code, code blocks, links, quotes) is converted; headings
become bold lines, lists bullets, tables ``a | b`` rows, images links.
"""

from __future__ import annotations

from collections.abc import Sequence

from markdown_it.token import Token

from askd.web.markdown import parse

_MARKS = {"strong": "*", "em": "_", "s": "~"}


def escape(text: str) -> str:
    """Slack's escaping: user text must not become a link or a mention."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _inline(children: Sequence[Token]) -> str:
    parts: list[str] = []
    links: list[tuple[int, str]] = []  # where each open link's text starts, and its address
    for tok in children:
        kind = tok.type.removesuffix("_open").removesuffix("_close")
        if tok.type == "text":
            parts.append(escape(tok.content))
        elif tok.type == "code_inline":
            parts.append(f"`{escape(tok.content)}`")
        elif kind in _MARKS:
            parts.append(_MARKS[kind])
        elif tok.type in ("softbreak", "hardbreak"):
            parts.append("\n")
        elif tok.type == "link_open":
            links.append((len(parts), str(tok.attrGet("href"))))
        elif tok.type == "link_close" and links:
            start, href = links.pop()
            label = "".join(parts[start:])
            del parts[start:]
            parts.append(f"<{href}|{label}>")
        elif tok.type == "image":
            alt = "".join(c.content for c in tok.children or [])
            src = str(tok.attrGet("src"))
            parts.append(f"<{src}|{escape(alt or src)}>")
    return "".join(parts)


def to_mrkdwn(text: str) -> str:
    lines: list[str] = []
    lists: list[int | None] = []  # per open list: the next number, None for bullets
    marker = ""  # a list item's bullet, for its first line
    quote = 0
    heading = False
    row: list[str] | None = None

    def emit(block: str) -> None:
        nonlocal marker
        indent = "    " * max(0, len(lists) - 1)
        for i, line in enumerate(block.split("\n")):
            lead = indent + (marker if i == 0 else " " * len(marker))
            lines.append("> " * quote + lead + line)
        marker = ""

    for tok in parse(text):
        if tok.type == "bullet_list_open":
            lists.append(None)
        elif tok.type == "ordered_list_open":
            lists.append(int(tok.attrGet("start") or 1))
        elif tok.type in ("bullet_list_close", "ordered_list_close"):
            lists.pop()
        elif tok.type == "list_item_open":
            n = lists[-1]
            marker = "• " if n is None else f"{n}. "
            if n is not None:
                lists[-1] = n + 1
        elif tok.type == "blockquote_open":
            quote += 1
        elif tok.type == "blockquote_close":
            quote -= 1
        elif tok.type in ("heading_open", "heading_close"):
            heading = tok.type == "heading_open"
        elif tok.type == "tr_open":
            row = []
        elif tok.type == "tr_close" and row is not None:
            emit(" | ".join(row))
            row = None
        elif tok.type == "inline":
            inline = _inline(tok.children or [])
            if row is not None:
                row.append(inline)
            else:
                emit(f"*{inline}*" if heading and inline else inline)
        elif tok.type in ("fence", "code_block"):
            emit("```\n" + escape(tok.content.rstrip("\n")) + "\n```")
        elif tok.type == "hr":
            emit("───")
    return "\n".join(lines)
