"""``askd.mail.compose``: what one mail says, for one question with one-tap
links, several questions (no one-tap links: they need the form), and a
long title."""

from __future__ import annotations

from askd.mail import compose

INBOX = "https://askd.example/?session=s1"
LINKS = {
    "open": "https://askd.example/a/OPEN",
    "options": [{"label": "Yes", "url": "https://askd.example/a/YES"}, {"label": "No", "url": "https://askd.example/a/NO"}],
}


def described(*questions: dict[str, object]) -> dict[str, object]:
    return {"questions": list(questions), "expiresAt": "2026-12-01T14:32:00.000Z"}


def test_one_question_with_its_one_tap_links() -> None:
    q = {"question": "Ship *now*?", "header": "Ship", "options": [{"label": "Yes", "description": "today"}, {"label": "No"}]}
    mail = compose(described(q), inbox=INBOX, links=LINKS)
    assert mail.subject == "A question for you: Ship"
    assert mail.text == (
        "An agent is waiting for your answer (until 14:32 UTC).\n\nShip\nShip *now*?\n"
        "  - Yes (today): https://askd.example/a/YES\n  - No: https://askd.example/a/NO\n\n"
        "Answer in your browser: https://askd.example/a/OPEN\nOpen your askd inbox: https://askd.example/?session=s1\n"
    )
    assert '<a href="https://askd.example/a/YES">Yes</a> — today' in mail.html and "<em>now</em>" in mail.html
    assert '<a href="https://askd.example/a/OPEN">Answer in your browser</a>' in mail.html


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
