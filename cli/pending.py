"""``askd pending``: list the questions waiting for an answer, and answer
one by hand as if the user had (``approve`` and ``deny``: ``approvals``)."""

from __future__ import annotations

from typing import Any

import typer
from rich.console import Console
from rich.padding import Padding
from rich.text import Text

from askd.cli import approvals
from askd.cli.clients import ADMIN, AdminTarget, JsonOption, admin_command
from askd.cli.common import (
    EXIT_USAGE,
    ReplyJsonOption,
    fail,
    print_json,
    reply_ack,
    request_argument,
    session_argument,
)
from askd.cli.output import QuestionMarkdown, ago, console, one_line, table, terminal_safe, until, warn_hidden
from askd.protocol import codec

app = typer.Typer(help="See and answer pending questions, approve or deny actions.", no_args_is_help=True)
app.command("approve")(approvals.approve)
app.command("deny")(approvals.deny)


def _summary(p: dict[str, Any]) -> str:
    if "action" in p:  # an action to approve (protocol section 17)
        return f"approve {one_line(str(p['action'].get('name', '')))} ({len(p.get('approvals') or ())} of {p.get('quorum', 1)})"
    questions = p["questions"]
    first = questions[0]
    text = one_line(first.get("question", ""))
    labels = [o.get("label", "") for o in first.get("options") or []]
    if labels:
        text += f" [{'/'.join(labels)}]"
    if len(questions) > 1:
        text += f" (+{len(questions) - 1} more)"
    return text


def _audience(p: dict[str, Any]) -> str:
    """Whom it is asked of, and the escalation steps taken: ``alice,
    group:leads (escalated 1)``."""
    text = ", ".join(p.get("to") or [p.get("userId", "")])
    if p.get("escalations"):
        text += f" (escalated {p['escalations']})"
    return text


@app.command("list")
@admin_command
def list_(
    session: str | None = typer.Option(None, "--session", help="Only this session."),
    user: str | None = typer.Option(None, "--user", help="Only this user's questions."),
    as_json: bool = JsonOption,
    admin: AdminTarget = ADMIN,
) -> None:
    """List pending questions, oldest first within a session."""
    with admin.client() as client:
        pending = client.pending(session=session, user=user)
    if as_json:
        print_json(pending)
        return
    if not pending:
        typer.echo("No pending questions.")
        return
    table(
        ["SESSION", "TO", "REQUEST", "QUESTION", "ASKED", "EXPIRES"],
        (
            [p["sessionId"], _audience(p), p["requestId"], _summary(p), ago(p["createdAt"]), until(p["expiresAt"])]
            for p in pending
        ),
        no_wrap=("REQUEST",),
    )
    warn_hidden(pending)


@app.command("show")
@admin_command
def show(
    session: str = session_argument(),
    request: str = request_argument(),
    as_json: bool = JsonOption,
    admin: AdminTarget = ADMIN,
) -> None:
    """Show one pending request in full: its questions, options,
    descriptions and previews, with their Markdown rendered."""
    with admin.client() as client:
        found = client.question(session, request)
    if as_json:
        print_json(found)
        return
    out = console()
    warn_hidden([found])
    if "action" in found:  # an action to approve (protocol section 17)
        approvals.show_action(out, found)
    else:
        _show_questions(out, found)
    _show_deliveries(out, found.get("deliveries") or [])


def _show_deliveries(out: Console, deliveries: list[dict[str, Any]]) -> None:
    """What became of its notifications on the node that answered
    (protocol section 6), one line per channel and recipient."""
    if not deliveries:
        return
    out.print(Text("Notifications (this node)", style="bold"))
    for d in deliveries:
        style = {"sent": "green", "failed": "bold red"}.get(d["status"], "yellow")
        line = Text(f"  {d['channel']} ").append(terminal_safe(d.get("recipient") or "(channel)"))
        line.append(f" {d['status']}", style=style).append(f" at {d['at']}, attempts {d['attempts']}")
        if d.get("reason"):
            line.append(f": {terminal_safe(d['reason'])}")
        out.print(line)


def _show_questions(out: Console, found: dict[str, Any]) -> None:
    for q in found["questions"]:
        if q.get("header"):
            out.print(Text(terminal_safe(q["header"]), style="bold reverse"))
        out.print(QuestionMarkdown(q.get("question", "")))
        for o in q.get("options") or []:
            out.print(Text("• ", style="bold").append(terminal_safe(o.get("label", "")), style="bold"))
            for field in ("description", "preview"):
                if o.get(field):
                    out.print(Padding(QuestionMarkdown(o[field]), (0, 0, 0, 2)))
        out.print()


def _key_for(arg: str, questions: list[dict[str, Any]], flag: str = "--answer") -> tuple[dict[str, Any], str]:
    """Split ``QUESTION=VALUE``: the longest question text (or header) that
    the argument starts with, followed by ``=``; the text may hold ``=`` too."""
    matches = []
    for q in questions:
        for name in (q.get("question"), q.get("header")):
            if name and arg.startswith(name + "="):
                matches.append((len(name), q, arg[len(name) + 1 :]))
    if not matches:
        names = "; ".join(repr(q["question"]) for q in questions)
        fail(f"{flag} {arg!r} names no question of this request (expected QUESTION=VALUE; questions: {names})", EXIT_USAGE)
    _, q, value = max(matches, key=lambda m: m[0])
    return q, value


def answers_from_flags(pairs: list[str], questions: list[dict[str, Any]], flag: str = "--answer") -> dict[str, Any]:
    """``--answer`` (or ``flag``) values to an answers object; repeated for a
    multiSelect question they build a list (which a multiSelect answer always is)."""
    answers: dict[str, Any] = {}
    for arg in pairs:
        q, value = _key_for(arg, questions, flag)
        key = q["question"]
        if q.get("multiSelect"):
            answers.setdefault(key, []).append(value)
        elif key in answers:
            fail(f"question {key!r} takes one answer; {flag} names it twice", EXIT_USAGE)
        else:
            answers[key] = value
    return answers


def parse_answers_json(text: str) -> dict[str, Any]:
    try:
        answers = codec.loads(text)
    except ValueError as err:
        fail(f"--answers is not valid JSON: {err}", EXIT_USAGE)
    if not isinstance(answers, dict):
        fail('--answers must be a JSON object, e.g. \'{"Which database?": "PostgreSQL"}\'', EXIT_USAGE)
    return answers


@app.command("answer")
@admin_command
def answer(
    session: str = session_argument(),
    request: str = request_argument(),
    answers_json: str | None = typer.Option(None, "--answers", help='The answers as a JSON object: {"QUESTION": "VALUE", ...}.'),
    answer_flags: list[str] = typer.Option([], "--answer", help='"QUESTION=VALUE"; repeat for several questions or choices.'),
    as_json: bool = ReplyJsonOption,
    admin: AdminTarget = ADMIN,
) -> None:
    """Answer a pending question as if the user had."""
    if (answers_json is None) == (not answer_flags):
        fail("give either --answers JSON or one or more --answer QUESTION=VALUE", EXIT_USAGE)
    with admin.client() as client:
        if answers_json is not None:
            answers = parse_answers_json(answers_json)
        else:
            answers = answers_from_flags(answer_flags, client.question(session, request)["questions"])
        client.answer(session, request, answers)
    reply_ack(as_json, "Answered", session, request, {"accepted": True, "answers": answers})
