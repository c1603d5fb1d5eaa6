"""The answer link page over plain HTTP (spec J): GET never changes
anything, POST answers exactly once, what a link is not a key to, and the
headers. Chromium drives the same pages in tests/system/browser/test_links.py."""

from __future__ import annotations

import asyncio
import re
from typing import Any

import httpx
import pytest

from askd.channels import links
from tests.conftest import SECRET, RunningDaemon, eventually, log_text, q  # noqa: F401  (log_text: the fixture)
from tests.system.links.conftest import PUBLIC_URL, link

BOTS = [
    "Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)",
    "Mozilla/5.0 (compatible; Discordbot/2.0; +https://discordapp.com)",
    "facebookexternalhit/1.1",
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120 Safari/537.36",
]


async def status_of(daemon: RunningDaemon, session: str, rid: str) -> dict[str, Any]:
    return (await daemon.result(session, rid)).json()


async def test_previewers_leave_the_question_pending(daemon: RunningDaemon) -> None:
    rid = (await daemon.ask("s1", "alice", [q("Deploy?", "Yes", "No")]))["requestId"]
    url = link(daemon, "s1", rid, "alice", 0)
    for agent in BOTS:
        got = await daemon.http.get(url, headers={"User-Agent": agent})
        assert got.status_code == 200 and "Yes" in got.text
        head = await daemon.http.head(url, headers={"User-Agent": agent})
        assert head.status_code == 200 and head.content == b""
    got = await daemon.http.get(url, params={"action": "answer"})  # a crawler that tries the form's field
    assert got.status_code == 200
    assert (await status_of(daemon, "s1", rid))["status"] == "pending"


async def test_headers_forbid_caching_referrers_scripts_and_foreign_forms(daemon: RunningDaemon) -> None:
    rid = (await daemon.ask("s1", "alice", [q("Deploy?", "Yes", "No")]))["requestId"]
    for url in (link(daemon, "s1", rid), link(daemon, "s1", rid) + "x"):  # a page and the 404 page
        r = await daemon.http.get(url)
        assert r.headers["Cache-Control"] == "no-store"
        assert r.headers["Referrer-Policy"] == "no-referrer"
        assert r.headers["Content-Type"] == "text/html; charset=utf-8"
        csp = dict(d.strip().split(" ", 1) for d in r.headers["Content-Security-Policy"].split(";"))
        assert csp["default-src"] == "'none'" and "script-src" not in csp  # no script at all
        assert csp["form-action"] == "'self'" and csp["frame-ancestors"] == "'none'" and csp["base-uri"] == "'none'"
        assert r.headers["X-Frame-Options"] == "DENY" and r.headers["X-Content-Type-Options"] == "nosniff"
        assert "<script" not in r.text


async def test_one_tap_answers_once_as_the_recipient_via_link(daemon: RunningDaemon) -> None:
    rid = (await daemon.ask("s1", "alice", [q("Deploy?", "Yes", "No")]))["requestId"]
    url = link(daemon, "s1", rid, "alice", 1)
    page = await daemon.http.get(url)
    assert "<strong>No</strong>" in page.text and "Confirm" in page.text
    r = await daemon.http.post(url, data={"action": "answer"})
    assert r.status_code == 200 and "your answer was sent" in r.text
    body = await status_of(daemon, "s1", rid)
    assert (body["status"], body["answers"], body["answeredBy"], body["via"]) == ("answered", {"Deploy?": "No"}, "alice", "link")
    again = await daemon.http.post(link(daemon, "s1", rid, "alice", 0), data={"action": "answer"})
    # Her own link again: "you", not her name (her answer itself is never shown).
    assert again.status_code == 200 and "You answered this question." in again.text
    assert (await status_of(daemon, "s1", rid))["answers"] == {"Deploy?": "No"}


async def test_the_first_of_two_links_posted_at_once_wins(daemon: RunningDaemon) -> None:
    await daemon.admin("PUT", "/admin/v1/groups/ops", json={"members": ["alice", "bob"]})
    r = await daemon.http.post(
        f"{daemon.url}/v1/sessions/s1/questions", json={"to": ["group:ops"], "questions": [q("Deploy?", "Yes", "No")]},
        headers=daemon.agent_headers,
    )
    rid = r.json()["requestId"]
    taps = await asyncio.gather(
        daemon.http.post(link(daemon, "s1", rid, "alice", 0), data={"action": "answer"}),
        daemon.http.post(link(daemon, "s1", rid, "bob", 1), data={"action": "answer"}),
    )
    won = [t for t in taps if "your answer was sent" in t.text]
    assert len(won) == 1
    body = await status_of(daemon, "s1", rid)
    loser = taps[1] if won[0] is taps[0] else taps[0]
    assert f"Already answered by {body['answeredBy']}." in loser.text


async def test_a_shared_channel_link_answers_as_nobody(daemon: RunningDaemon) -> None:
    rid = (await daemon.ask("s1", "alice", [q("Deploy?", "Yes", "No")]))["requestId"]
    r = await daemon.http.post(link(daemon, "s1", rid, None, 0), data={"action": "answer"})
    assert r.status_code == 200
    body = await status_of(daemon, "s1", rid)
    assert (body["answeredBy"], body["via"]) == (None, "link")


async def test_the_form_link_takes_several_questions_and_free_text(daemon: RunningDaemon) -> None:
    questions = [q("Which?", "a", "b", "c", multi=True), q("Why?"), q("Where?", "here", "there")]
    rid = (await daemon.ask("s1", "alice", questions))["requestId"]
    url = link(daemon, "s1", rid)
    page = (await daemon.http.get(url)).text
    # Each question with options has Other as one more choice.
    assert page.count('type="checkbox"') == 4 and page.count('type="radio"') == 3
    empty = await daemon.http.post(url, data={"action": "answer"})
    assert empty.status_code == 400 and "Answer at least one question." in empty.text
    form = {"action": "answer", "q0": ["0", "2"], "q0.text": "d", "q1.text": "because", "q2": "1", "q2.text": ""}
    r = await daemon.http.post(url, data=form)
    assert r.status_code == 200, r.text
    body = await status_of(daemon, "s1", rid)
    assert body["answers"] == {"Which?": ["a", "c", "d"], "Why?": "because", "Where?": "there"}
    assert (body["answeredBy"], body["via"]) == ("alice", "link")


async def test_a_bad_form_changes_nothing_and_keeps_what_was_typed(daemon: RunningDaemon) -> None:
    rid = (await daemon.ask("s1", "alice", [q("Which?", "a", "b"), q("Why?")]))["requestId"]
    url = link(daemon, "s1", rid)
    r = await daemon.http.post(url, data={"action": "answer", "q0": "7", "q1.text": "kept text"})
    assert r.status_code == 400 and "kept text" in r.text
    assert (await status_of(daemon, "s1", rid))["status"] == "pending"


async def test_decline_with_a_reason(daemon: RunningDaemon) -> None:
    rid = (await daemon.ask("s1", "alice", [q("Deploy?", "Yes", "No")]))["requestId"]
    bobs = link(daemon, "s1", rid, "bob")  # bob was never asked
    assert (await daemon.http.post(bobs, data={"action": "decline"})).status_code == 404
    r = await daemon.http.post(link(daemon, "s1", rid, "alice", 0), data={"action": "decline", "reason": "not mine"})
    assert r.status_code == 200 and "You declined this question." in r.text
    body = await status_of(daemon, "s1", rid)
    assert (body["status"], body["answeredBy"], body["via"], body["reason"]) == ("declined", "alice", "link", "not mine")
    shown = await daemon.http.get(link(daemon, "s1", rid, None))
    # Anyone holding a link learns who declined, never the reason typed (the agent gets it).
    assert "Declined by alice." in shown.text and "not mine" not in shown.text


@pytest.mark.parametrize("settings_overrides", [{"public_url": PUBLIC_URL, "result_ttl_seconds": 2.0}])
async def test_after_a_timeout_the_link_says_so_until_the_result_is_forgotten(daemon: RunningDaemon) -> None:
    rid = (await daemon.ask("s1", "alice", [q("Deploy?", "Yes", "No")], timeoutSeconds=0.2))["requestId"]
    url = link(daemon, "s1", rid, "alice", 0)
    assert "Confirm" in (await daemon.http.get(url)).text
    await eventually(lambda: not daemon.daemon.hub.registry.get("s1", rid).pending, what="the timeout")
    r = await daemon.http.post(url, data={"action": "answer"})
    assert r.status_code == 200 and "timed out" in r.text
    assert (await status_of(daemon, "s1", rid))["status"] == "timeout"

    async def gone() -> bool:
        return (await daemon.http.get(url)).status_code == 404

    await eventually(gone, what="the result forgotten")


async def test_forged_altered_and_unknown_links_get_one_neutral_404(daemon: RunningDaemon) -> None:
    rid = (await daemon.ask("s1", "alice", [q("Deploy?", "Yes", "No")]))["requestId"]
    good = link(daemon, "s1", rid, "alice", 0)
    token = good.rsplit("/", 1)[1]
    altered = token[:10] + ("A" if token[10] != "A" else "B") + token[11:]
    bad = [
        good.rsplit("/", 1)[0] + "/" + altered,
        link(daemon, "s1", "no-such-request", "alice"),
        link(daemon, "s1", rid, "alice", 5),  # an option the question does not have
        good.rsplit("/", 1)[0] + "/" + links.mint("another-secret-0123456789abcdef-01", "s1", rid, "alice"),
        good.rsplit("/", 1)[0] + "/" + daemon.token("user", "alice"),  # a user token is no link
        good.rsplit("/", 1)[0] + "/",
    ]
    pages = []
    for url in bad:
        for r in (await daemon.http.get(url), await daemon.http.post(url, data={"action": "answer"})):
            assert r.status_code == 404, url
            pages.append(r.text)
    assert len(set(pages)) == 1 and "This link is not valid:" in pages[0] and rid not in pages[0]
    assert (await status_of(daemon, "s1", rid))["status"] == "pending"


async def test_a_link_is_no_key_to_the_api_the_inbox_or_other_questions(daemon: RunningDaemon) -> None:
    rid = (await daemon.ask("s1", "alice", [q("Deploy?", "Yes", "No")]))["requestId"]
    other = (await daemon.ask("s2", "alice", [q("Other?", "Yes")]))["requestId"]
    token = links.mint(SECRET, "s1", rid, "alice", 0)
    auth = {"Authorization": f"Bearer {token}"}
    assert (await daemon.http.get(f"{daemon.url}/v1/sessions/s1/questions/{rid}", headers=auth)).status_code == 401
    assert (await daemon.http.get(f"{daemon.url}/v1/sessions/s1/questions", headers=auth)).status_code == 401
    assert (await daemon.http.get(f"{daemon.admin_url}/admin/v1/pending", headers=auth)).status_code == 401
    import websockets

    with pytest.raises(websockets.InvalidStatus):
        await websockets.connect(daemon.ws_url, additional_headers=auth)
    assert (await status_of(daemon, "s2", other))["status"] == "pending"


async def test_a_post_from_another_site_is_refused(daemon: RunningDaemon) -> None:
    rid = (await daemon.ask("s1", "alice", [q("Deploy?", "Yes", "No")]))["requestId"]
    url = link(daemon, "s1", rid, "alice", 0)
    for headers in ({"Origin": "https://evil.example"}, {"Sec-Fetch-Site": "cross-site"}, {"Sec-Fetch-Site": "same-site"}):
        r = await daemon.http.post(url, data={"action": "answer"}, headers=headers)
        assert r.status_code == 403, headers
        assert "only be sent from its own page" in r.text
    assert (await status_of(daemon, "s1", rid))["status"] == "pending"
    # What the page's own form sends under Referrer-Policy: no-referrer.
    same = {"Origin": "null", "Sec-Fetch-Site": "same-origin"}
    assert (await daemon.http.post(url, data={"action": "answer"}, headers=same)).status_code == 200
    assert (await status_of(daemon, "s1", rid))["status"] == "answered"


async def test_the_page_speaks_chinese_when_asked(daemon: RunningDaemon) -> None:
    rid = (await daemon.ask("s1", "alice", [q("Deploy?", "Yes", "No")]))["requestId"]
    r = await daemon.http.get(link(daemon, "s1", rid, "alice", 0), headers={"Accept-Language": "zh-Hans-CN,zh;q=0.9,en;q=0.5"})
    assert '<html lang="zh-CN">' in r.text and "确认" in r.text
    r = await daemon.http.get(link(daemon, "s1", rid, "alice", 0), headers={"Accept-Language": "fr"})
    assert '<html lang="en">' in r.text and "Confirm" in r.text


async def test_question_markdown_is_rendered_and_sanitised(daemon: RunningDaemon) -> None:
    text = "Merge **now**? <script>alert(1)</script> [x](javascript:alert(1))"
    rid = (await daemon.ask("s1", "alice", [q(text, "Yes")]))["requestId"]
    page = (await daemon.http.get(link(daemon, "s1", rid))).text
    assert "<strong>now</strong>" in page and "&lt;script&gt;" in page
    assert "<script" not in page and 'href="javascript' not in page


async def test_the_token_is_kept_out_of_the_logs(daemon: RunningDaemon, log_text: Any) -> None:
    rid = (await daemon.ask("s1", "alice", [q("Deploy?", "Yes", "No")]))["requestId"]
    url = link(daemon, "s1", rid, "alice", 0)
    await daemon.http.get(url)
    await daemon.http.post(url, data={"action": "answer"})
    token = url.rsplit("/", 1)[1]
    logged = log_text.getvalue()
    assert re.search(r'"path": ?"/a/\[REDACTED\]"', logged), logged
    assert token not in logged and token[:20] not in logged


async def test_one_tap_on_a_multiselect_question_answers_a_list_of_one(daemon: RunningDaemon) -> None:
    rid = (await daemon.ask("s1", "alice", [q("Which?", "a", "b", multi=True)]))["requestId"]
    head = await daemon.http.head(link(daemon, "s1", rid, "alice", 1) + "x")
    assert (head.status_code, head.content) == (404, b"")
    assert (await daemon.http.post(link(daemon, "s1", rid, "alice", 1), data={"action": "answer"})).status_code == 200
    assert (await status_of(daemon, "s1", rid))["answers"] == {"Which?": ["b"]}
