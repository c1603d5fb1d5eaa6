"""The answer link page's reply to a submission names what was taken: the
option chosen (one tap or the form), that an answer of one's own was sent
(never its words), an approval once or always, a denial and that a reason
went with it (never the reason). Only that reply says it: a later visit to
the same link shows how it ended and who, not what."""

from __future__ import annotations

import re

from askd.channels import links
from tests.conftest import RunningDaemon, q
from tests.system.links.conftest import link
from tests.system.links.test_approvals import ask_action

ZH = {"Accept-Language": "zh-CN"}


def said(page: str) -> str:
    """The page's text after its outcome line, tags dropped, spaces collapsed."""
    tail = page.split('role="status">', 1)[1].split("</main>", 1)[0]
    return " ".join(re.sub(r"<[^>]+>", " ", tail).split())


async def test_a_one_tap_reply_names_the_option_and_a_later_visit_does_not(daemon: RunningDaemon) -> None:
    rid = (await daemon.ask("s1", "alice", [q("Which database?", "SQLite", "PostgreSQL")]))["requestId"]
    url = link(daemon, "s1", rid, "alice", 1)
    r = await daemon.http.post(url, data={"action": "answer"})
    assert r.status_code == 200, r.text
    assert "Thank you: your answer was sent." in r.text
    assert "You chose: PostgreSQL" in said(r.text)
    for again in (await daemon.http.get(url), await daemon.http.get(link(daemon, "s1", rid, "alice"))):
        assert "You answered this question." in again.text
        assert "PostgreSQL" not in again.text and "You chose" not in again.text


async def test_the_forms_reply_names_each_questions_options_and_own_answers_without_their_words(daemon: RunningDaemon) -> None:
    questions = [q("Which regions?", "eu", "us", "ap", multi=True, header="Regions"), q("Any notes?", header="Notes")]
    rid = (await daemon.ask("s1", "alice", questions))["requestId"]
    form = {"action": "answer", "q0": ["0", "2", "other"], "q0.text": "mars base", "q1.text": "private words"}
    r = await daemon.http.post(link(daemon, "s1", rid), data=form)
    assert r.status_code == 200, r.text
    text = said(r.text)
    assert "Regions : You chose: eu, ap , and an answer of your own." in text
    assert "Notes : You sent an answer of your own." in text
    assert "mars base" not in r.text and "private words" not in r.text
    zh = (await daemon.http.get(link(daemon, "s1", rid), headers=ZH)).text
    assert "你选择了" not in zh and "eu" not in said(zh)


async def test_the_reply_to_a_decline_says_a_reason_went_with_it_never_the_reason(daemon: RunningDaemon) -> None:
    rid = (await daemon.ask("s1", "alice", [q("Why?")]))["requestId"]
    r = await daemon.http.post(link(daemon, "s1", rid), data={"action": "decline", "reason": "personal matters"})
    assert r.status_code == 200
    assert "You declined this question." in r.text and "Your reason was sent with it." in r.text
    assert "personal matters" not in r.text
    rid = (await daemon.ask("s2", "alice", [q("Why?")]))["requestId"]
    r = await daemon.http.post(link(daemon, "s2", rid), data={"action": "decline"}, headers=ZH)
    assert "你的理由已一并发送" not in r.text and "Your reason" not in r.text


async def test_the_reply_to_an_approval_names_the_action_and_the_scope(daemon: RunningDaemon) -> None:
    once = await ask_action(daemon, ["alice"])
    r = await daemon.http.post(link(daemon, "s1", once, "alice", links.APPROVE), data={"action": "approve"})
    assert r.status_code == 200 and "You approved, this once: deploy" in said(r.text), r.text
    again = await daemon.http.get(link(daemon, "s1", once, "alice"))
    assert "You approved" not in again.text and "Already approved by alice." in again.text

    always = await ask_action(daemon, ["alice"], allowAlways=True)
    r = await daemon.http.post(link(daemon, "s1", always, "alice"), data={"action": "always"}, headers=ZH)
    assert r.status_code == 200 and "你批准了（此次及以后同类请求）： deploy" in said(r.text), r.text


async def test_the_reply_to_a_denial_names_the_action_and_that_a_reason_went(daemon: RunningDaemon) -> None:
    rid = await ask_action(daemon, ["alice"])
    r = await daemon.http.post(link(daemon, "s1", rid, "alice", links.DENY), data={"action": "decline", "reason": "not today 4711"})
    assert r.status_code == 200
    text = said(r.text)
    assert "You denied: deploy" in text and "Your reason was sent with it." in text and "4711" not in r.text
    later = await daemon.http.get(link(daemon, "s1", rid, "alice"))
    assert "You denied:" not in later.text and "Your reason" not in later.text
