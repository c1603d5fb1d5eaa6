"""A question link's form: the questions as the page's template shows them,
and the answers a sent form gives (``link_page.py`` serves both)."""

from __future__ import annotations

from typing import Any

from askd.core import InvalidAnswer
from askd.web import markdown

MAX_TEXT = 10_000  # one free-text answer


def _md(text: Any) -> str:
    return markdown.render(text) if isinstance(text, str) and text else ""


def view_questions(questions: list[dict[str, Any]], form: dict[str, list[str]]) -> list[dict[str, Any]]:
    """The questions as the template shows them; ``form`` refills a form sent back."""
    out = []
    for i, q in enumerate(questions):
        chosen = set(form.get(f"q{i}", ()))
        options = [
            {
                "index": j,
                "label": str(o.get("label", "")),
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
                "header": header if isinstance(header, str) else "",
                "html": _md(q.get("question")),
                "multi": bool(q.get("multiSelect")),
                "options": options,
                "text": (form.get(f"q{i}.text") or [""])[-1],
            }
        )
    return out


def answers_from_form(questions: list[dict[str, Any]], form: dict[str, list[str]]) -> dict[str, Any]:
    """The answers a question link's form gives: an option by its index, or
    the text typed (which, on a one-answer question, wins over a choice:
    typing is the more deliberate act). Unanswered questions are left out;
    an option that is not there raises ``InvalidAnswer``."""
    answers: dict[str, Any] = {}
    for i, q in enumerate(questions):
        labels = [str(o.get("label", "")) for o in q.get("options") or [] if isinstance(o, dict)]
        picked = []
        for value in form.get(f"q{i}", ()):
            if not value.isdigit() or int(value) >= len(labels):
                raise InvalidAnswer(f"no option {value!r}")
            picked.append(labels[int(value)])
        text = (form.get(f"q{i}.text") or [""])[-1].strip()
        if len(text) > MAX_TEXT:
            raise InvalidAnswer(f"an answer holds at most {MAX_TEXT} characters")
        if q.get("multiSelect"):
            chosen = list(dict.fromkeys(picked + ([text] if text else [])))
            if chosen:
                answers[q["question"]] = chosen
        elif text or picked:
            answers[q["question"]] = text or picked[-1]
    return answers
