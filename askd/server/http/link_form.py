"""A question link's form: the questions as the page's template shows them,
and the answers a sent form gives (``link_page.py`` serves both).

*Other* is one of a question's choices, as in the inbox: a radio (or check
box) of its own, valued ``other``, with its text field. With no script,
typing does not choose it, so text typed with no choice counts as *Other*;
a form that both chooses an option and types text on a one-answer question
says two things and is refused (``Unclear``), never silently read one way."""

from __future__ import annotations

import re
from typing import Any

from askd.core import InvalidAnswer
from askd.web import markdown

MAX_TEXT = 10_000  # one free-text answer
OTHER = "other"  # the form's value for a question's Other choice
# An option's index as the form sends it: ASCII digits, a few of them (a
# question holds far fewer options), so no "²" and no 5,000-digit int().
_INDEX = re.compile(r"[0-9]{1,4}")


class Unclear(Exception):
    """A form that cannot be read one way: ``key`` names the page's message
    (en.json, zh-CN.json), ``values`` fill it in."""

    def __init__(self, key: str, **values: str) -> None:
        super().__init__(key)
        self.key, self.values = key, values


def _md(text: Any) -> str:
    """Markdown as safe HTML, hidden characters as badges (protocol section 4)."""
    return markdown.shown(text) if isinstance(text, str) and text else ""


def view_questions(questions: list[dict[str, Any]], form: dict[str, list[str]]) -> list[dict[str, Any]]:
    """The questions as the template shows them (header and labels as safe
    HTML, Markdown rendered, hidden characters as badges: protocol section
    4); ``form`` refills a form sent back."""
    out = []
    for i, q in enumerate(questions):
        chosen = set(form.get(f"q{i}", ()))
        options = [
            {
                "index": j,
                "label": markdown.shown_plain(str(o.get("label", ""))),
                "description": _md(o.get("description")),
                "preview": _md(o.get("preview")),
                "checked": str(j) in chosen,
            }
            for j, o in enumerate(q.get("options") or [])
            if isinstance(o, dict)
        ]
        header = q.get("header")
        out.append(
            {
                "index": i,
                "header": markdown.shown_plain(header) if isinstance(header, str) else "",
                "html": _md(q.get("question")),
                "multi": bool(q.get("multiSelect")),
                "options": options,
                "other": OTHER in chosen,
                "text": (form.get(f"q{i}.text") or [""])[-1],
            }
        )
    return out


def _picked(values: list[str], labels: list[str]) -> tuple[list[str], bool]:
    """The option labels ``values`` choose, and whether Other is among them;
    ``InvalidAnswer`` for a value that names no option."""
    picked, other = [], False
    for value in values:
        if value == OTHER:
            other = True
        elif _INDEX.fullmatch(value) and int(value) < len(labels):
            picked.append(labels[int(value)])
        else:
            raise InvalidAnswer("the form names an option the question does not have")
    return picked, other


def answers_from_form(questions: list[dict[str, Any]], form: dict[str, list[str]]) -> dict[str, Any]:
    """The answers a question link's form gives. Unanswered questions are
    left out; an option that is not there raises ``InvalidAnswer``; Other
    chosen with nothing typed, or (one answer) an option chosen while text
    is typed, raise ``Unclear``."""
    answers: dict[str, Any] = {}
    for i, q in enumerate(questions):
        labels = [str(o.get("label", "")) for o in q.get("options") or [] if isinstance(o, dict)]
        values = form.get(f"q{i}", [])
        text = (form.get(f"q{i}.text") or [""])[-1].strip()
        if len(text) > MAX_TEXT:
            raise InvalidAnswer(f"an answer holds at most {MAX_TEXT} characters")
        if q.get("multiSelect"):
            picked, other = _picked(values, labels)
            if other and not text:
                raise Unclear("other.empty")
            chosen = list(dict.fromkeys(picked + ([text] if text else [])))
            if chosen:
                answers[q["question"]] = chosen
            continue
        # One answer: a browser sends one radio's value; a hand-made form
        # with several has each checked and is read as its last, as before.
        _picked(values, labels)
        picked, other = _picked(values[-1:], labels)
        if other and not text:
            raise Unclear("other.empty")
        if picked and text:
            raise Unclear("other.both", option=picked[0])
        if text or picked:
            answers[q["question"]] = text or picked[0]
    return answers


def taken_view(questions: list[dict[str, Any]], answers: dict[str, Any]) -> list[dict[str, Any]]:
    """What a sent form gave, for the reply to that form alone (never on a
    later visit): per answered question, the options chosen (as safe HTML,
    hidden characters as badges) and whether an answer of one's own was
    sent; the words typed are not repeated. ``question`` names it when there
    are several (its header, else its first sentence)."""
    out = []
    several = len(questions) > 1
    for q in questions:
        if q.get("question") not in answers:
            continue
        value = answers[q["question"]]
        values = value if isinstance(value, list) else [value]
        labels = {str(o.get("label", "")) for o in q.get("options") or [] if isinstance(o, dict)}
        header = q.get("header")
        name = header if isinstance(header, str) and header.strip() else markdown.plain(str(q.get("question", "")), 80)
        out.append(
            {
                "question": markdown.shown_plain(name) if several else "",
                "chosen": [markdown.shown_plain(v) for v in values if v in labels],
                "own": any(v not in labels for v in values),
            }
        )
    return out
