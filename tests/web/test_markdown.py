"""The server's Markdown renderer (askd.web.markdown): what it keeps,
what it refuses. The page's renderer gives the same HTML (tests/system/browser)."""

from __future__ import annotations

import re
from html.parser import HTMLParser

import pytest

from askd.web.markdown import render
from tests.web.cases import CASES, HOSTILE

# What the renderers may produce: markdown-it's tags, and these attributes.
TAGS = {
    "p", "br", "hr", "h1", "h2", "h3", "h4", "h5", "h6", "blockquote", "ul", "ol", "li", "pre", "code",
    "em", "strong", "s", "a", "span", "table", "thead", "tbody", "tr", "th", "td",
}
ATTRS = {"href", "title", "target", "rel", "class", "start"}


class _Elements(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.elements: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.elements.append((tag, dict(attrs)))

    handle_startendtag = handle_starttag


def elements(html: str) -> list[tuple[str, dict[str, str | None]]]:
    parser = _Elements()
    parser.feed(html)
    parser.close()
    return parser.elements


@pytest.mark.parametrize("text", CASES + HOSTILE)
def test_only_known_tags_attributes_and_safe_links(text: str) -> None:
    for tag, attrs in elements(render(text)):
        assert tag in TAGS, tag
        assert set(attrs) <= ATTRS, attrs
        if tag == "a":
            assert re.match(r"(?i)^(https?|mailto):", attrs["href"] or ""), attrs
            assert attrs["target"] == "_blank" and attrs["rel"] == "noopener noreferrer"


def test_commonmark_tables_and_strikethrough() -> None:
    html = render("**b** *i* ~~s~~ `c`\n\n| a | b |\n|:--|--:|\n| 1 | 2 |")
    assert "<strong>b</strong> <em>i</em> <s>s</s> <code>c</code>" in html
    assert '<th class="align-left">a</th>' in html and '<td class="align-right">2</td>' in html


def test_raw_html_is_text() -> None:
    assert render('<b onclick="x()">hi</b>') == "<p>&lt;b onclick=&quot;x()&quot;&gt;hi&lt;/b&gt;</p>\n"


@pytest.mark.parametrize(
    "url", ["javascript:alert(1)", "data:text/html,x", "vbscript:x", "file:///etc/passwd", "/relative", "#frag", "ftp://x"]
)
def test_links_outside_http_https_mailto_stay_text(url: str) -> None:
    assert render(f"[x]({url})") == f"<p>[x]({url})</p>\n"


def test_links_open_in_a_new_tab_without_opener_or_referrer() -> None:
    assert render("[x](https://e.example/a)") == (
        '<p><a href="https://e.example/a" target="_blank" rel="noopener noreferrer">x</a></p>\n'
    )
    assert 'href="mailto:a@b.example"' in render("<mailto:a@b.example>")


def test_an_image_is_a_link_never_an_img() -> None:
    assert render("![a chart](https://e.example/c.png)") == (
        '<p><a href="https://e.example/c.png" target="_blank" rel="noopener noreferrer" class="md-image">a chart</a></p>\n'
    )
    assert render("![](https://e.example/c.png)").count("https://e.example/c.png") == 2  # no alt: the address is the text
    assert render("![x](data:image/png;base64,AA)") == "<p>![x](data:image/png;base64,AA)</p>\n"


def test_code_keeps_its_text_and_a_diff_marks_its_lines() -> None:
    code = "if a < b && c:\n    print('x')  # \"q\"\n"
    assert render(f"```python\n{code}```") == (
        '<pre><code class="language-python">if a &lt; b &amp;&amp; c:\n'
        "    print('x')  # &quot;q&quot;\n</code></pre>\n"
    )
    html = render("```diff\n--- a/f\n+++ b/f\n@@ -1 +1 @@\n-old\n+new\n same\n```")
    assert html == (
        '<pre><code class="language-diff"><span class="diff-file">--- a/f</span>\n'
        '<span class="diff-file">+++ b/f</span>\n<span class="diff-hunk">@@ -1 +1 @@</span>\n'
        '<span class="diff-del">-old</span>\n<span class="diff-add">+new</span>\n same\n</code></pre>\n'
    )
