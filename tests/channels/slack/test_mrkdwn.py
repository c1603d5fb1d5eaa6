"""Question Markdown as Slack mrkdwn (the ``slack`` webhook format)."""

from __future__ import annotations

import pytest

from askd.channels.slack.mrkdwn import to_mrkdwn


@pytest.mark.parametrize(
    ("markdown", "mrkdwn"),
    [
        ("**bold** *it* _it_ ~~gone~~", "*bold* _it_ _it_ ~gone~"),
        ("`a <b> & c`", "`a &lt;b&gt; &amp; c`"),
        ("[docs](https://d.example/a?b=1) and <mailto:x@y.example>", "<https://d.example/a?b=1|docs> and <mailto:x@y.example|mailto:x@y.example>"),
        ("[**bold** link](https://d.example)", "<https://d.example|*bold* link>"),
        ("![chart](https://c.example/c.png)", "<https://c.example/c.png|chart>"),
        # Refused by the page, so text here too; raw HTML and mentions are text.
        ("[x](javascript:alert(1)) <b>hi</b> <!channel> <@U123>", "[x](javascript:alert(1)) &lt;b&gt;hi&lt;/b&gt; &lt;!channel&gt; &lt;@U123&gt;"),
        ("# Title\n\ntext", "*Title*\ntext"),
        ("- a\n- b\n  1. x\n  2. y", "• a\n• b\n    1. x\n    2. y"),
        ("> quoted\n> more", "> quoted\n> more"),
        ("```diff\n-a <\n+b\n```", "```\n-a &lt;\n+b\n```"),
        ("| h1 | h2 |\n|---|---|\n| 1 | 2 |", "h1 | h2\n1 | 2"),
        ("one\ntwo", "one\ntwo"),
    ],
)
def test_to_mrkdwn(markdown: str, mrkdwn: str) -> None:
    assert to_mrkdwn(markdown) == mrkdwn
