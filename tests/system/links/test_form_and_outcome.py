"""The no-script form's edges and the page after the end: numbers read from
the form are range-checked (400, never 500), *Other* is one of the choices
and an ambiguous form is refused, the outcome page says how a question
ended and who answered but never what, and the "not valid" page says what
to do next."""

from __future__ import annotations

import re

import pytest

from tests.conftest import RunningDaemon, q
from tests.system.links.conftest import link

ZH = {"Accept-Language": "zh-CN"}


async def status_of(daemon: RunningDaemon, session: str, rid: str) -> dict[str, object]:
    return (await daemon.result(session, rid)).json()  # type: ignore[no-any-return]


@pytest.mark.parametrize("value", ["²", "٣", "9" * 5000, "-1", " 1", "1e3", "0x1", "99999999999999999999"])
async def test_an_index_that_is_no_small_number_is_a_400_not_a_500(daemon: RunningDaemon, value: str) -> None:
    rid = (await daemon.ask("s1", "alice", [q("Which?", "a", "b"), q("Why?")]))["requestId"]
    r = await daemon.http.post(link(daemon, "s1", rid), data={"action": "answer", "q0": value, "q1.text": "kept"})
    assert r.status_code == 400, r.text
    assert "This answer was not taken" in r.text and "kept" in r.text
    assert (await status_of(daemon, "s1", rid))["status"] == "pending"


async def test_other_is_one_of_the_choices_with_its_text_field(daemon: RunningDaemon) -> None:
    rid = (await daemon.ask("s1", "alice", [q("Where?", "here", "there"), q("Which?", "a", "b", multi=True)]))["requestId"]
    page = (await daemon.http.get(link(daemon, "s1", rid))).text
    assert re.search(r'<input type="radio" name="q0" value="other"', page), page
    assert re.search(r'<input type="checkbox" name="q1" value="other"', page), page
    assert page.count('type="radio"') == 3 and page.count('type="checkbox"') == 3
    assert 'name="q0.text"' in page and 'name="q1.text"' in page


async def test_a_choice_and_other_text_at_once_are_refused_with_a_message(daemon: RunningDaemon) -> None:
    rid = (await daemon.ask("s1", "alice", [q("Where?", "here", "there")]))["requestId"]
    url = link(daemon, "s1", rid)
    form = {"action": "answer", "q0": "1", "q0.text": "my own place"}
    r = await daemon.http.post(url, data=form)
    assert r.status_code == 400 and "my own place" in r.text  # what was typed is kept
    assert "“there”" in r.text and "Other" in r.text and "This answer was not taken" not in r.text
    zh = await daemon.http.post(url, data=form, headers=ZH)
    assert zh.status_code == 400 and "“there”" in zh.text and "其他" in zh.text
    # Other chosen with nothing typed is refused too.
    empty = await daemon.http.post(url, data={"action": "answer", "q0": "other", "q0.text": " "})
    assert empty.status_code == 400 and "Type your answer next to" in empty.text
    assert (await status_of(daemon, "s1", rid))["status"] == "pending"
    # Other chosen with its text: the text is the answer.
    ok = await daemon.http.post(url, data={"action": "answer", "q0": "other", "q0.text": "my own place"})
    assert ok.status_code == 200, ok.text
    assert (await status_of(daemon, "s1", rid))["answers"] == {"Where?": "my own place"}


async def test_text_typed_with_no_choice_is_the_answer(daemon: RunningDaemon) -> None:
    rid = (await daemon.ask("s1", "alice", [q("Where?", "here", "there"), q("Which?", "a", "b", multi=True)]))["requestId"]
    form = {"action": "answer", "q0.text": "elsewhere", "q1": ["1", "other"], "q1.text": "c"}
    assert (await daemon.http.post(link(daemon, "s1", rid), data=form)).status_code == 200
    assert (await status_of(daemon, "s1", rid))["answers"] == {"Where?": "elsewhere", "Which?": ["b", "c"]}


async def test_the_outcome_page_never_shows_what_was_answered(daemon: RunningDaemon) -> None:
    secret_text = "the vault code is 4711"
    rid = (await daemon.ask("s1", "alice", [q("Where?", "here", "there"), q("Why?")]))["requestId"]
    tab = await daemon.connect("alice")
    await tab.subscribe("s1")
    reply = await tab.answer("s1", rid, {"Where?": secret_text, "Why?": "because " + secret_text})
    assert reply["type"] == "ack", reply
    for url in (link(daemon, "s1", rid, None), link(daemon, "s1", rid, "alice"), link(daemon, "s1", rid, "alice", 0)):
        for r in (await daemon.http.get(url), await daemon.http.post(url, data={"action": "answer", "q0": "0"})):
            assert r.status_code == 200
            assert "4711" not in r.text and "vault" not in r.text
    shown = (await daemon.http.get(link(daemon, "s1", rid, None))).text
    assert "Already answered by alice." in shown


async def test_the_outcome_page_leaves_out_a_decline_reason_and_own_answers_too(daemon: RunningDaemon) -> None:
    rid = (await daemon.ask("s1", "alice", [q("Why?")]))["requestId"]
    r = await daemon.http.post(link(daemon, "s1", rid), data={"action": "answer", "q0.text": "private words"})
    assert r.status_code == 200 and "your answer was sent" in r.text and "private words" not in r.text
    rid = (await daemon.ask("s2", "alice", [q("Why?")]))["requestId"]
    declined = await daemon.http.post(link(daemon, "s2", rid), data={"action": "decline", "reason": "personal matters"})
    assert declined.status_code == 200 and "personal matters" not in declined.text
    assert "personal matters" not in (await daemon.http.get(link(daemon, "s2", rid, None))).text
    assert (await status_of(daemon, "s2", rid))["reason"] == "personal matters"  # the agent still gets it


async def test_reopening_your_own_answered_link_says_by_you(daemon: RunningDaemon) -> None:
    await daemon.admin("PUT", "/admin/v1/groups/ops", json={"members": ["alice", "bob"]})
    r = await daemon.http.post(
        f"{daemon.url}/v1/sessions/s1/questions", json={"to": ["group:ops"], "questions": [q("Deploy?", "Yes", "No")]},
        headers=daemon.agent_headers,
    )
    rid = r.json()["requestId"]
    assert (await daemon.http.post(link(daemon, "s1", rid, "alice", 0), data={"action": "answer"})).status_code == 200
    for own in (link(daemon, "s1", rid, "alice"), link(daemon, "s1", rid, "alice", 1)):
        page = (await daemon.http.get(own)).text
        assert "You answered this question." in page and "by alice" not in page
    assert "你已回答此问题。" in (await daemon.http.get(link(daemon, "s1", rid, "alice"), headers=ZH)).text
    assert "Already answered by alice." in (await daemon.http.get(link(daemon, "s1", rid, "bob"))).text


async def test_the_not_valid_page_says_what_to_do_next(daemon: RunningDaemon) -> None:
    rid = (await daemon.ask("s1", "alice", [q("Deploy?", "Yes", "No")]))["requestId"]
    url = link(daemon, "s1", rid) + "x"
    r = await daemon.http.get(url)
    assert r.status_code == 404
    assert "ask whoever sent the link for a new one" in r.text and 'href="../"' in r.text
    zh = await daemon.http.get(url, headers=ZH)
    assert zh.status_code == 404 and "收件箱" in zh.text
