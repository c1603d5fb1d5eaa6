"""``askd.web.markdown.plain``: a question's Markdown as one short line of
plain text, for where markup cannot show (issue 30.5: a mail's Subject, an
HTML title)."""

from __future__ import annotations

import pytest

from askd.web.markdown import plain


@pytest.mark.parametrize(
    ("source", "line"),
    [
        ("Ship **release 2.4** tonight? See [the notes](https://notes.example/2.4)", "Ship release 2.4 tonight?"),
        ("Roll back **payments** to v41?", "Roll back payments to v41?"),
        ("今晚发布 **2.4 版**吗？请看[说明](https://notes.example/2.4)。", "今晚发布 2.4 版吗？"),
        ("把 **payments** 回滚到 v41 吗", "把 payments 回滚到 v41 吗"),
        ("回滚完成。再部署", "回滚完成。"),
        ("First line *here*\nsecond line", "First line here"),
        ("```sh\nmake release\n```\n\n## Deploy `v2` _now_\n\nbody", "Deploy v2 now"),
        ("    indented code\n\nThe question.", "The question."),
        ("![the chart](https://x.example/c.png) shows a drop. Why?", "the chart shows a drop."),
        ("Use it, e.g. with ~~old~~ new. Then", "Use it, e.g. with old new."),
        ("- first item\n- second", "first item"),
        ("<b>raw</b> html stays text", "<b>raw</b> html stays text"),
        ("```\nonly code\n```", ""),
        ("", ""),
    ],
)
def test_the_first_line_or_sentence_without_markup(source: str, line: str) -> None:
    assert plain(source) == line


def test_a_limit_clips_with_an_ellipsis() -> None:
    assert plain("word " * 40, limit=20) == "word word word word…"
    assert plain("Short.", limit=20) == "Short."
