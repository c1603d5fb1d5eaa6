"""What one notification mail says: its Subject, text and HTML parts in the
reader's language (``compose``, ``reminder``), and the MIME message built
from them (``message``).

Shared by the daemon's mail channel (``askd.channels.mail.channel``, which
the delivery worker claims and retries) and ``askd notify test`` (one
attempt, reported to the terminal). What is heavy (Markdown) is imported
where it is used.
"""

from __future__ import annotations

import html
import json
from dataclasses import dataclass
from datetime import datetime, timezone
from email.errors import MessageError
from email.headerregistry import Address
from email.message import EmailMessage
from email.utils import format_datetime, make_msgid
from functools import cache
from typing import Any

from askd import __version__
from askd.protocol import codec, visible

SUBJECT_CHARS = 80


@dataclass(frozen=True, slots=True)
class Mail:
    subject: str
    text: str
    html: str


@cache
def _words(lang: str) -> dict[str, Any]:
    from askd.web import STATIC_DIR

    words: dict[str, Any] = codec.loads((STATIC_DIR / "i18n" / f"{lang}.json").read_text(encoding="utf-8"))
    return words


def default_language() -> str:
    from askd.web.languages import pick_language

    return pick_language(())


# The HTML part's looks, inline on each element: mail programs (Gmail,
# Outlook) drop <style> blocks and external sheets but keep style="".
FONT = "-apple-system,BlinkMacSystemFont,'Segoe UI',Roboto,'Helvetica Neue',Arial,'Noto Sans','PingFang SC','Microsoft YaHei',sans-serif"
STYLE = {
    "body": "margin:0;padding:0;background:#f5f6f8;",
    "card": (
        f"max-width:560px;margin:0 auto;padding:24px 20px;background:#ffffff;font-family:{FONT};"
        "font-size:15px;line-height:1.5;color:#1f2328;"
    ),
    "intro": "margin:0 0 16px;color:#59636e;font-size:14px;",
    "session": "font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:13px;color:#1f2328;",
    "header": "margin:20px 0 4px;font-size:13px;font-weight:600;text-transform:uppercase;letter-spacing:.04em;color:#59636e;",
    "question": "margin:0 0 12px;",
    "options": "margin:0 0 16px;",
    "button": (
        "display:inline-block;margin:0 8px 8px 0;padding:8px 18px;border-radius:6px;background:#0969da;"
        "color:#ffffff;font-weight:600;text-decoration:none;"
    ),
    "option": "display:inline-block;margin:0 8px 8px 0;padding:7px 17px;border:1px solid #d0d7de;border-radius:6px;font-weight:600;",
    "about": "margin:0 0 8px;color:#59636e;font-size:14px;",
    "link": "color:#0969da;",
    "pre": (
        "margin:0 0 16px;padding:8px;overflow-x:auto;background:#f5f6f8;border-radius:6px;"
        "font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:13px;white-space:pre-wrap;"
    ),
    "warning": "margin:0 0 16px;padding:6px 10px;border-left:3px solid #d97706;color:#9a3412;font-weight:600;",
    "footer": "margin:20px 0 0;padding-top:12px;border-top:1px solid #d8dee4;font-size:14px;",
}


def compose(
    description: dict[str, Any],
    *,
    inbox: str,
    links: dict[str, Any] | None = None,
    lang: str | None = None,
) -> Mail:
    """One recipient's mail about a pending question (``Request.describe()``).
    ``links`` is that recipient's from the answer links (``{"open": URL,
    "options": [{"label", "url"}, ...]}``); without them the mail points to
    the inbox. Question text is Markdown: its source in the text part,
    rendered safely (askd.web.markdown) in the HTML part, and as plain text
    (its first sentence) in the Subject and the HTML's title. Both parts
    name the session, as the Slack message does; hidden characters as marks under a warning (protocol section 17)."""
    from askd.web.markdown import plain, render

    lang = lang or default_language()
    hidden, description = visible.shows_hidden(description), visible.revealed(description)
    if "action" in description:
        return _compose_action(description, inbox=inbox, links=links or {}, lang=lang, hidden=hidden)
    w = _words(lang)
    questions = description.get("questions") or []
    session = str(description["sessionId"])
    until = str(description["expiresAt"])[11:16]
    option_urls = {visible.reveal(o["label"]): o["url"] for o in (links or {}).get("options") or ()}
    open_url = (links or {}).get("open")
    first = questions[0] if questions else {}
    header = str(first.get("header") or "").strip()
    title = header.splitlines()[0] if header else plain(str(first.get("question") or ""))
    subject = w["mail.subject"].replace("{title}", _clip(title, SUBJECT_CHARS))
    e = html.escape
    text, parts = _opening(w["mail.intro"], session, until, hidden, lang)
    for q in questions:
        header = q.get("header")
        if isinstance(header, str) and header:
            text.append(header)
            parts.append(f'<h3 style="{STYLE["header"]}">{e(header)}</h3>')
        body = str(q.get("question", ""))
        text.append(body)
        parts.append(f'<div style="{STYLE["question"]}">{render(body)}</div>')
        options = [o for o in q.get("options") or () if isinstance(o, dict)]
        buttons: list[tuple[str, str | None]] = []
        abouts: list[str] = []
        for o in options:
            label, about = str(o.get("label", "")), str(o.get("description") or "")
            url = option_urls.get(label) if len(questions) == 1 else None
            # The URL last on its line: mail programs end a bare link at the line's end.
            text.append(f"  - {label}" + (f" ({about})" if about else "") + (f": {url}" if url else ""))
            buttons.append((label, url))
            if about:
                abouts.append(f'<p style="{STYLE["about"]}"><b>{e(label)}</b> — {e(about)}</p>')
        if buttons:
            parts.append(_button_row(buttons, "".join(abouts)))
        text.append("")
    footer = []
    if open_url:
        line = w["mail.open"]
        text.append(f"{line}: {open_url}")
        footer.append(f'<a href="{e(open_url)}" style="{STYLE["link"]}">{e(line)}</a>')
    text.append(f"{w['mail.inbox']}: {inbox}")
    footer.append(f'<a href="{e(inbox)}" style="{STYLE["link"]}">{e(w["mail.inbox"])}</a>')
    parts.append(f'<p style="{STYLE["footer"]}">{" · ".join(footer)}</p>')
    return _mail(subject, text, parts, lang)


def _opening(intro: str, session: str, until: str, hidden: bool, lang: str) -> tuple[list[str], list[str]]:
    """A mail's first lines, text and HTML: its intro naming the session and
    the time it is open until, then the warning when it shows hidden characters."""
    intro = intro.replace("{until}", f"{until} UTC")
    text = [intro.replace("{session}", session), ""]
    shown_session = f'<span style="{STYLE["session"]}">{html.escape(session)}</span>'
    parts = [f'<p style="{STYLE["intro"]}">{html.escape(intro).replace("{session}", shown_session)}</p>']
    if hidden:
        _warn(text, parts, lang)
    return text, parts


def _warn(text: list[str], parts: list[str], lang: str) -> None:
    """The warning line above a text with hidden characters, in both parts."""
    line = _words(lang)["hidden.warning"]
    text += [f"! {line}", ""]
    parts.append(f'<p style="{STYLE["warning"]}">{html.escape(line)}</p>')


def _button_row(buttons: list[tuple[str, str | None]], after: str = "") -> str:
    """A row of buttons, ``(label, url)``: a link where there is a URL, else
    the label alone (an option with no one-tap answer); ``after`` below them."""
    e = html.escape
    shown = (
        f'<a href="{e(url)}" style="{STYLE["button"]}">{e(label)}</a>' if url else f'<span style="{STYLE["option"]}">{e(label)}</span>'
        for label, url in buttons
    )
    return f'<div style="{STYLE["options"]}">{"".join(shown)}{after}</div>'


def _mail(subject: str, text: list[str], parts: list[str], lang: str) -> Mail:
    """The mail: the text part's lines, and ``parts`` in the HTML page's card."""
    e = html.escape
    page = (
        f'<!DOCTYPE html><html lang="{e(lang)}"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f'<title>{e(subject)}</title></head><body style="{STYLE["body"]}">'
        f'<div style="{STYLE["card"]}">{"".join(parts)}</div></body></html>'
    )
    return Mail(subject, "\n".join(text).rstrip() + "\n", page)


@cache
def _page_words(lang: str) -> dict[str, str]:
    """The answer-link page's words (askd/web/link_page): an approval's
    mail says Approve and Deny as its page does."""
    from askd.web import STATIC_DIR

    words: dict[str, str] = codec.loads((STATIC_DIR.parent / "link_page" / f"{lang}.json").read_text(encoding="utf-8"))
    return words


def _compose_action(description: dict[str, Any], *, inbox: str, links: dict[str, Any], lang: str, hidden: bool) -> Mail:
    """One recipient's mail about an action to approve (protocol section 17): its
    name, summary and preview (Markdown: source in the text part, rendered
    safely in the HTML), its arguments as JSON, the quorum's progress, and
    with answer links the buttons *Approve*, *Deny* and *Open* (each opens
    the page, with that decision chosen; opening decides nothing)."""
    from askd.web.markdown import render

    w, p = _words(lang), _page_words(lang)
    action = description["action"]
    name, session, until = str(action.get("name", "")), str(description["sessionId"]), str(description["expiresAt"])[11:16]
    # One line whatever the name holds: a header with a line break cannot be built at all.
    subject = f"{p['approval.title']}: {_clip(' '.join(name.split()), SUBJECT_CHARS)}"
    e = html.escape
    text, parts = _opening(p["approval.mail.intro"], session, until, hidden, lang)
    text.append(name)
    parts.append(f'<h3 style="{STYLE["header"]}">{e(name)}</h3>')
    for key in ("summary", "preview"):
        value = action.get(key)
        if isinstance(value, str) and value:
            text += ["", value]
            parts.append(f'<div style="{STYLE["question"]}">{render(value)}</div>')
    # Indented for people to read, not the codec's compact form.
    arguments = json.dumps(action.get("arguments"), indent=2, ensure_ascii=False)
    text += ["", f"{p['approval.arguments']}:", arguments]
    parts.append(f'<p style="{STYLE["about"]}">{e(p["approval.arguments"])}</p><pre style="{STYLE["pre"]}">{e(arguments)}</pre>')
    quorum, approvals = int(description.get("quorum") or 1), description.get("approvals") or []
    if quorum > 1:
        progress = p["approval.progress"].replace("{n}", str(len(approvals))).replace("{needed}", str(quorum))
        text += ["", progress]
        parts.append(f'<p style="{STYLE["about"]}">{e(progress)}</p>')
    text.append("")
    buttons = [(p["approve"], links.get("approve")), (p["deny"], links.get("deny")), (w["mail.open"], links.get("open"))]
    shown = [(label, url) for label, url in buttons if url]
    for label, url in shown:
        text.append(f"{label}: {url}")  # the URL last on its line: mail programs end a bare link there
    if shown:
        parts.append(_button_row(shown))
    text.append(f"{w['mail.inbox']}: {inbox}")
    parts.append(f'<p style="{STYLE["footer"]}"><a href="{e(inbox)}" style="{STYLE["link"]}">{e(w["mail.inbox"])}</a></p>')
    return _mail(subject, text, parts, lang)


def reminder(mail: Mail, lang: str | None = None) -> Mail:
    """The same mail as a reminder (protocol section 20): its Subject says so."""
    subject = _words(lang or default_language())["mail.reminder"].replace("{subject}", mail.subject)
    return Mail(subject, mail.text, mail.html)


def _clip(text: str, n: int) -> str:
    return text if len(text) <= n else text[: n - 1].rstrip() + "…"


class NotBuilt(Exception):
    """The email package refused a part of the mail (a header with a line
    break, say): it names the part and the error's type, never the text."""


def message(mail: Mail, sender: Address, to: str) -> EmailMessage:
    """The MIME message: text, with the HTML as its alternative. Raises
    :class:`NotBuilt` when the email package refuses a part of it."""
    msg, part = EmailMessage(), "Subject"
    try:
        for part, value in (
            ("Subject", mail.subject),
            ("From", sender),
            ("To", to),
            ("Date", format_datetime(datetime.now(timezone.utc))),
            ("Message-ID", make_msgid(domain=sender.domain or None)),
            ("Auto-Submitted", "auto-generated"),  # RFC 3834: no auto-replies to it
            ("X-Mailer", f"askd/{__version__}"),
        ):
            msg[part] = value
        part = "body"
        msg.set_content(mail.text)
        msg.add_alternative(mail.html, subtype="html")
    except (ValueError, TypeError, MessageError) as err:
        where = "body" if part == "body" else f"{part} header"
        raise NotBuilt(f"the mail could not be built: its {where} was refused ({type(err).__name__})") from None
    return msg
