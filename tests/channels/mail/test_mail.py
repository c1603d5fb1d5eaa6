"""``askd.channels.mail.message.compose``: what one mail says, for one question with one-tap
links, several questions (no one-tap links: they need the form), and a
long title."""

from __future__ import annotations

import re
from html.parser import HTMLParser

from askd.channels.mail.message import compose

INBOX = "https://askd.example/?session=s1"
LINKS = {
    "open": "https://askd.example/a/OPEN",
    "options": [{"label": "Yes", "url": "https://askd.example/a/YES"}, {"label": "No", "url": "https://askd.example/a/NO"}],
}


def described(*questions: dict[str, object]) -> dict[str, object]:
    return {"sessionId": "s1", "questions": list(questions), "expiresAt": "2026-12-01T14:32:00.000Z"}


def test_one_question_with_its_one_tap_links() -> None:
    q = {"question": "Ship *now*?", "header": "Ship", "options": [{"label": "Yes", "description": "today"}, {"label": "No"}]}
    mail = compose(described(q), inbox=INBOX, links=LINKS)
    assert mail.subject == "A question for you: Ship"
    assert mail.text == (
        "An agent is waiting for your answer (session s1, until 14:32 UTC).\n\nShip\nShip *now*?\n"
        "  - Yes (today): https://askd.example/a/YES\n  - No: https://askd.example/a/NO\n\n"
        "Answer in your browser: https://askd.example/a/OPEN\nOpen your askd inbox: https://askd.example/?session=s1\n"
    )
    assert re.search(r'<a href="https://askd.example/a/YES" style="[^"]+">Yes</a>', mail.html) and "<em>now</em>" in mail.html
    assert "<b>Yes</b> — today" in mail.html
    assert re.search(r'<a href="https://askd.example/a/OPEN" style="[^"]+">Answer in your browser</a>', mail.html)


def test_several_questions_get_the_question_link_only() -> None:
    mail = compose(described({"question": "A?", "options": [{"label": "Yes"}]}, {"question": "B?"}), inbox=INBOX, links=LINKS)
    assert "  - Yes\n" in mail.text and "/a/YES" not in mail.text + mail.html
    assert "Answer in your browser: https://askd.example/a/OPEN" in mail.text
    assert mail.subject == "A question for you: A?"


def test_a_long_first_line_is_clipped_in_the_subject() -> None:
    mail = compose(described({"question": "x" * 200 + "\nsecond line"}), inbox=INBOX)
    assert len(mail.subject) == len("A question for you: ") + 80 and mail.subject.endswith("…")
    assert "\n" not in mail.subject and "second line" not in mail.subject
    assert "Answer in your browser" not in mail.text  # no links: the inbox only


# Issue 30.5: Markdown in a question shows as plain text where only plain text fits.
SHIP = "Ship **release 2.4** tonight? See [the notes](https://notes.example/2.4)\n\n```sh\nmake release\n```"
SHIP_ZH = "今晚发布 **2.4 版**吗？请看[说明](https://notes.example/2.4)。\n\n```sh\nmake release\n```"


class _Title(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.inside, self.title = False, ""

    def handle_starttag(self, tag: str, attrs: object) -> None:
        self.inside = tag == "title"

    def handle_endtag(self, tag: str) -> None:
        self.inside = False

    def handle_data(self, data: str) -> None:
        if self.inside:
            self.title += data


def title_of(page: str) -> str:
    parser = _Title()
    parser.feed(page)
    return parser.title


def test_the_subject_and_title_are_the_questions_first_sentence_without_markup() -> None:
    mail = compose(described({"question": SHIP, "options": [{"label": "Yes"}]}), inbox=INBOX, lang="en")
    assert mail.subject == "A question for you: Ship release 2.4 tonight?"
    assert title_of(mail.html) == mail.subject
    assert SHIP in mail.text  # the text part keeps the source


def test_the_subject_in_chinese_ends_at_the_full_width_question_mark() -> None:
    mail = compose(described({"question": SHIP_ZH}), inbox=INBOX, lang="zh-CN")
    assert mail.subject == "有个问题等你回答：今晚发布 2.4 版吗？"
    assert title_of(mail.html) == mail.subject


# Issue 30.6: the HTML part is styled inline (what mail programs keep) and names the session.


def test_the_html_part_is_styled_inline_and_names_the_session() -> None:
    q = {"question": "Roll back **payments** to v41?", "options": [{"label": "Yes"}, {"label": "No", "description": "wait"}]}
    mail = compose({**described(q), "sessionId": "deploy-42"}, inbox=INBOX, links=LINKS, lang="en")
    assert "<style" not in mail.html and "<link" not in mail.html  # dropped by Gmail and Outlook
    assert "sans-serif" in mail.html and 'style="' in mail.html.split("<body", 1)[1][:40]
    assert re.search(r'\(session <span style="[^"]*">deploy-42</span>, until 14:32 UTC\)', mail.html), mail.html
    assert "An agent is waiting for your answer (session deploy-42, until 14:32 UTC)." in mail.text
    # The options are buttons (links styled as such), not a bare list.
    for label in ("Yes", "No"):
        assert re.search(rf'<a href="https://askd.example/a/{label.upper()}" style="[^"]*border-radius[^"]*">{label}</a>', mail.html)
    assert "&#8226;" not in mail.html and "<li>" not in mail.html


def test_the_chinese_mail_names_the_session_too() -> None:
    mail = compose({**described({"question": SHIP_ZH}), "sessionId": "deploy-42"}, inbox=INBOX, lang="zh-CN")
    assert "会话 deploy-42" in mail.text and ">deploy-42</span>" in mail.html
