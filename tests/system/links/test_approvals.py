"""Answer links to an action to approve (protocol section 17, section 12's
links) against a real daemon: the page shows the action (name, summary and
preview as safe Markdown, the arguments as JSON, the quorum's progress); a
GET decides nothing; the page's POST approves or denies as the link's
recipient with ``via`` ``link``; already voted, ended and invalid are
clear pages in English and Chinese; the outcome never shows a reason."""

from __future__ import annotations

from typing import Any

from askd.channels import links
from tests.conftest import RunningDaemon
from tests.system.links.conftest import link

ZH = {"Accept-Language": "zh-CN"}
ACTION = {
    "name": "deploy",
    "arguments": {"env": "prod", "replicas": 3},
    "summary": "Ship the **release** <script>alert(1)</script>",
    "preview": "```diff\n-old\n+new\n```",
}


async def ask_action(daemon: RunningDaemon, to: list[str], quorum: int = 1, **extra: Any) -> str:
    body = {"to": to, "action": {**ACTION, **extra}, "quorum": quorum}
    r = await daemon.http.post(f"{daemon.url}/v1/sessions/s1/questions", json=body, headers=daemon.agent_headers)
    assert r.status_code == 201, r.text
    return str(r.json()["requestId"])


async def result(daemon: RunningDaemon, rid: str) -> dict[str, Any]:
    return (await daemon.result("s1", rid)).json()  # type: ignore[no-any-return]


async def test_the_page_shows_the_action_and_a_get_decides_nothing(daemon: RunningDaemon) -> None:
    rid = await ask_action(daemon, ["alice"])
    for option in (None, links.APPROVE, links.DENY):
        for _ in range(2):  # an unfurler, then the person
            r = await daemon.http.get(link(daemon, "s1", rid, "alice", option))
            assert r.status_code == 200, r.text
    page = r.text
    assert "<h2>deploy</h2>" in page and "<strong>release</strong>" in page
    assert "<script>" not in page and "&lt;script&gt;" in page  # raw HTML shown as text
    assert 'class="diff-add"' in page or "+new" in page
    assert "&quot;replicas&quot;: 3" in page  # formatted JSON
    assert (await result(daemon, rid))["status"] == "pending"
    approve = (await daemon.http.get(link(daemon, "s1", rid, "alice", links.APPROVE))).text
    assert 'value="approve"' in approve and "Your decision will be: approve" in approve
    deny = (await daemon.http.get(link(daemon, "s1", rid, "alice", links.DENY))).text
    assert 'value="approve"' not in deny and '<details class="decline" open>' in deny
    zh = (await daemon.http.get(link(daemon, "s1", rid, "alice"), headers=ZH)).text
    assert "批准" in zh and "拒绝" in zh
    # An option an approval lacks names nothing.
    assert (await daemon.http.get(link(daemon, "s1", rid, "alice", 2))).status_code == 404


async def test_approve_through_the_link(daemon: RunningDaemon) -> None:
    rid = await ask_action(daemon, ["alice"])
    r = await daemon.http.post(link(daemon, "s1", rid, "alice", links.APPROVE), data={"action": "approve"})
    assert r.status_code == 200 and "you approved it" in r.text, r.text
    got = await result(daemon, rid)
    assert (got["status"], got["approved"], got["answeredBy"], got["via"]) == ("answered", True, "alice", "link")
    assert got["approvals"][0]["by"] == "alice" and got["approvals"][0]["via"] == "link" and got["scope"] == "once"
    again = await daemon.http.post(link(daemon, "s1", rid, "alice"), data={"action": "approve"})
    assert again.status_code == 200 and "Already approved by alice." in again.text


async def test_deny_with_a_reason_that_the_outcome_never_shows(daemon: RunningDaemon) -> None:
    rid = await ask_action(daemon, ["alice", "bob"])
    form = {"action": "decline", "reason": "the vault code is 4711"}
    r = await daemon.http.post(link(daemon, "s1", rid, "bob", links.DENY), data=form)
    assert r.status_code == 200 and "You denied this action." in r.text and "4711" not in r.text
    got = await result(daemon, rid)
    assert (got["status"], got["approved"], got["answeredBy"], got["via"], got["reason"]) == (
        "declined", False, "bob", "link", "the vault code is 4711"
    )
    for url in (link(daemon, "s1", rid, "alice"), link(daemon, "s1", rid, None)):
        shown = await daemon.http.get(url)
        assert shown.status_code == 200 and "Denied by bob." in shown.text and "4711" not in shown.text
    zh = await daemon.http.get(link(daemon, "s1", rid, "alice"), headers=ZH)
    assert "bob 已拒绝。" in zh.text


async def test_a_quorum_of_two_with_two_users_links(daemon: RunningDaemon) -> None:
    rid = await ask_action(daemon, ["alice", "bob"], quorum=2)
    first = await daemon.http.post(link(daemon, "s1", rid, "alice", links.APPROVE), data={"action": "approve"})
    assert first.status_code == 200 and "your approval was recorded" in first.text
    assert "1 of 2 approvals: alice" in first.text
    assert (await result(daemon, rid))["status"] == "pending"
    # Alice's second try is already voted: a clear page, nothing changed.
    twice = await daemon.http.post(link(daemon, "s1", rid, "alice"), data={"action": "approve"})
    assert twice.status_code == 409 and "You approved this already" in twice.text
    zh = await daemon.http.post(link(daemon, "s1", rid, "alice"), data={"action": "approve"}, headers=ZH)
    assert zh.status_code == 409 and "你已经批准过了" in zh.text
    mine = (await daemon.http.get(link(daemon, "s1", rid, "alice"))).text
    assert 'value="approve"' not in mine and 'value="decline"' in mine  # she may still deny
    bobs = (await daemon.http.get(link(daemon, "s1", rid, "bob"))).text
    assert "1 of 2 approvals: alice" in bobs and 'value="approve"' in bobs
    last = await daemon.http.post(link(daemon, "s1", rid, "bob"), data={"action": "approve"})
    assert last.status_code == 200 and "you approved it" in last.text
    got = await result(daemon, rid)
    assert got["approved"] is True and [a["by"] for a in got["approvals"]] == ["alice", "bob"]
    assert all(a["via"] == "link" for a in got["approvals"]) and got["answeredBy"] == "bob"
    ended = (await daemon.http.get(link(daemon, "s1", rid, None))).text
    assert "Already approved by alice, bob." in ended


async def test_always_only_where_offered_and_a_form_that_decides_nothing(daemon: RunningDaemon) -> None:
    rid = await ask_action(daemon, ["alice"])
    url = link(daemon, "s1", rid, "alice")
    assert 'value="always"' not in (await daemon.http.get(url)).text
    assert (await daemon.http.post(url, data={"action": "always"})).status_code == 400
    assert (await daemon.http.post(url, data={"action": "answer", "q0": "0"})).status_code == 400
    assert (await daemon.http.post(url, data={})).status_code == 400
    assert (await result(daemon, rid))["status"] == "pending"
    rid2 = await ask_action(daemon, ["alice"], allowAlways=True)
    url2 = link(daemon, "s1", rid2, "alice")
    assert 'value="always"' in (await daemon.http.get(url2)).text
    assert (await daemon.http.post(url2, data={"action": "always"})).status_code == 200
    assert (await result(daemon, rid2))["scope"] == "always"


async def test_a_cross_site_post_and_a_stranger_change_nothing(daemon: RunningDaemon) -> None:
    rid = await ask_action(daemon, ["alice"])
    cross = await daemon.http.post(
        link(daemon, "s1", rid, "alice"), data={"action": "approve"}, headers={"Origin": "https://evil.example"}
    )
    assert cross.status_code == 403
    stranger = await daemon.http.post(link(daemon, "s1", rid, "mallory"), data={"action": "approve"})
    assert stranger.status_code == 404 and "Link not valid" in stranger.text
    assert (await result(daemon, rid))["status"] == "pending"


async def test_an_open_tab_sees_a_links_approval_and_the_end(daemon: RunningDaemon) -> None:
    rid = await ask_action(daemon, ["alice", "bob"], quorum=2)
    tab = await daemon.connect("bob")
    await tab.subscribe("s1")
    await daemon.http.post(link(daemon, "s1", rid, "alice"), data={"action": "approve"})
    voted = await tab.expect("ask_user_questions_voted")
    approvals = voted["payload"]["approvals"]
    assert [(a["by"], a["via"]) for a in approvals] == [("alice", "link")] and voted["payload"]["needed"] == 2
    await daemon.http.post(link(daemon, "s1", rid, "bob"), data={"action": "decline"})
    ended = await tab.expect("ask_user_questions_cancelled")
    assert rid in str(ended)
    got = await result(daemon, rid)
    assert (got["status"], got["answeredBy"], got["via"]) == ("declined", "bob", "link")
