"""The characters a person cannot see (askd.protocol.visible): one set in
Python and one in the page's static/hidden.js, which must agree; how a text
shows them (marks, badges in HTML) and which names refuse them."""

from __future__ import annotations

import re

import pytest

from askd.protocol import visible
from askd.web import STATIC_DIR
from askd.web.markdown import render, reveal_html, shown, shown_plain

TROJAN = "cat README.md \u2067; echo PWNED #\u2069"


def _js_set(name: str) -> set[int]:
    source = (STATIC_DIR / "hidden.js").read_text(encoding="utf-8")
    found = re.search(rf"export const {name} = \[([^\]]*)\];", source)
    assert found is not None, f"static/hidden.js defines no {name}"
    return {int(code, 16) for code in re.findall(r"0x([0-9a-fA-F]+)", found.group(1))}


def test_the_page_and_the_daemon_hold_the_same_set() -> None:
    assert _js_set("BIDI_CONTROLS") == visible.BIDI_CONTROLS
    assert _js_set("ZERO_WIDTH") == visible.ZERO_WIDTH


def test_the_set_is_the_one_the_contract_names() -> None:
    bidi = {0x202A, 0x202B, 0x202C, 0x202D, 0x202E, 0x2066, 0x2067, 0x2068, 0x2069, 0x200E, 0x200F, 0x061C}
    assert visible.BIDI_CONTROLS == bidi
    assert visible.ZERO_WIDTH == {0x200B, 0x200C, 0x200D, 0x2060, 0xFEFF, 0x00AD}  # with the soft hyphen


def test_reveal_marks_each_hidden_character_and_nothing_else() -> None:
    assert visible.reveal(TROJAN) == "cat README.md ⟨U+2067⟩; echo PWNED #⟨U+2069⟩"
    every = "".join(map(chr, sorted(visible.HIDDEN)))
    assert visible.reveal(every) == "".join(f"⟨U+{c:04X}⟩" for c in sorted(visible.HIDDEN))
    assert visible.reveal("déjà vu 中文 🙂 a\tb\n") == "déjà vu 中文 🙂 a\tb\n"
    assert visible.has_hidden(TROJAN) and not visible.has_hidden("plain")


@pytest.mark.parametrize(
    ("name", "problem"),
    [
        ("alice\u200b", "a zero-width character (U+200B at 5)"),
        ("\u202eadmin", "a bidirectional control character (U+202E at 0)"),
        ("al\u00adice", "a zero-width character (U+00AD at 2)"),
        ("a\nb", "a control character (U+000A at 1)"),
        ("a\x85", "a control character (U+0085 at 1)"),
    ],
)
def test_a_name_refuses_what_cannot_be_seen(name: str, problem: str) -> None:
    assert visible.refusal(name) == f"must not hold {problem}"
    assert re.fullmatch(visible.NAME_PATTERN, name) is None


@pytest.mark.parametrize("name", ["alice", "Jürgen M/x", "张三", "deploy:prod", "a b"])
def test_a_name_of_visible_characters_is_taken(name: str) -> None:
    assert visible.refusal(name) is None
    assert re.fullmatch(visible.NAME_PATTERN, name) is not None


def test_an_action_name_refuses_controls_only() -> None:
    assert visible.refuse_controls("Bash\u2067") == "Bash\u2067"
    with pytest.raises(ValueError, match="U\\+000D at 4"):
        visible.refuse_controls("Bash\r\nBcc: x")
    assert re.fullmatch(visible.NO_CONTROLS_PATTERN, "Bash\u2067") is not None
    assert re.fullmatch(visible.NO_CONTROLS_PATTERN, "Bash\n") is None


def test_revealed_marks_what_a_person_reads_and_keeps_the_rest() -> None:
    described = {
        "sessionId": "s1",
        "metadata": {"x": "\u200b"},
        "action": {"name": "Bash", "arguments": {"cmd\u200b": [TROJAN, 3]}, "editable": True},
    }
    out = visible.revealed(described)
    assert out["action"]["arguments"] == {"cmd⟨U+200B⟩": ["cat README.md ⟨U+2067⟩; echo PWNED #⟨U+2069⟩", 3]}
    assert out["metadata"] == {"x": "\u200b"} and out["action"]["editable"] is True
    assert described["action"]["arguments"] == {"cmd\u200b": [TROJAN, 3]}  # a copy: the original is untouched
    assert visible.shows_hidden(described) and not visible.shows_hidden({"metadata": {"x": "\u200b"}, "questions": []})


def test_html_shows_badges_in_text_and_marks_in_attributes() -> None:
    html = shown(f'`{TROJAN}` [link](https://example.com "t\u200bt")\n\n```diff\n+a\u202eb\n```')
    badge = '<span class="hidden-char">⟨U+{}⟩</span>'
    assert f"<code>cat README.md {badge.format('2067')}; echo PWNED #{badge.format('2069')}</code>" in html
    assert 'title="t⟨U+200B⟩t"' in html
    assert f'<span class="diff-add">+a{badge.format("202E")}b</span>' in html
    assert not visible.has_hidden(html)
    assert shown_plain("<b>\u200b") == f"&lt;b&gt;{badge.format('200B')}"
    assert reveal_html(render("plain")) == render("plain")
