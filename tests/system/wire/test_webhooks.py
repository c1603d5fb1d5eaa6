"""Webhooks against real HTTP receivers (spec E): bodies, signatures,
retries, timeouts, after_seconds and only_offline, and that no receiver can
slow an ask down. Backoff is shortened so nothing waits longer than it must."""

from __future__ import annotations

import asyncio
import io
import re
import threading
import time
from http.server import ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from askd.channels.retry import Retry
from tests.conftest import QUIET, SECRET, RunningDaemon, eventually, log_text, q  # noqa: F401  (log_text: the fixture)
from tests.support.receiver import HANG, Receiver, receiver  # noqa: F401  (the fixture)

HOOK_SECRET = "whsec-0123456789abcdef"
TIMEOUT = 0.8  # one attempt's limit, for the receiver that hangs


@pytest.fixture
def notify_settings() -> dict[str, Any]:
    """Parametrize this name to change the notify section of one test."""
    return {}


@pytest.fixture
def settings_overrides(receiver: Receiver, notify_settings: dict[str, Any]) -> dict[str, Any]:
    return {"notify": {"webhook_url": receiver.url, "webhook_secret": HOOK_SECRET, "timeout_seconds": TIMEOUT, **notify_settings}}


@pytest.fixture(autouse=True)
def fast_retry(daemon: RunningDaemon) -> Retry:
    assert daemon.daemon.notifier is not None
    retry = daemon.daemon.notifier.retry = Retry(base=0.02, cap=0.05)
    return retry


async def metric(daemon: RunningDaemon, name: str, **labels: str) -> float:
    r = await daemon.admin("GET", "/metrics")
    for family in text_string_to_metric_families(r.text):
        for sample in family.samples:
            if sample.name == name and all(sample.labels.get(k) == v for k, v in labels.items()):
                return sample.value
    raise AssertionError(f"no metric {name} {labels}")


def request_of(daemon: RunningDaemon, session: str, rid: str) -> Any:
    req = daemon.daemon.hub.registry.get(session, rid)
    assert req is not None
    return req


async def test_a_new_question_is_posted_as_json_and_signed(daemon: RunningDaemon, receiver: Receiver) -> None:
    asked = await daemon.ask("s1", "alice", [q("Which database?", "PostgreSQL", "SQLite", header="DB")], metadata={"tool": "x"})
    [got] = await receiver.wait_for(1)
    assert got.path == "/hooks/T000/B000/s3cr3tpath"
    assert got.headers["Content-Type"] == "application/json"
    assert got.signed_with(HOOK_SECRET)
    assert not got.signed_with(HOOK_SECRET + "x")
    # The old X-Askd-Signature (the same on every retry, the body only: it replayed forever) is gone.
    assert "x-askd-signature" not in got.header_names
    body = got.json()
    assert body == {
        "event": "question.asked",
        "userId": "alice",
        "to": ["alice"],
        "users": ["alice"],
        "sessionId": "s1",
        "requestId": asked["requestId"],
        "questions": [q("Which database?", "PostgreSQL", "SQLite", header="DB")],
        "createdAt": asked["createdAt"],
        "expiresAt": asked["expiresAt"],
        "url": f"{daemon.url}/?session=s1",
    }
    await eventually(lambda: request_of(daemon, "s1", asked["requestId"]).notified, what="notified")
    assert await metric(daemon, "askd_webhook_delivered_total") == 1
    assert await metric(daemon, "askd_webhook_retried_total") == 0
    await receiver.quiet(QUIET, 1)  # once


@pytest.mark.parametrize("notify_settings", [{"webhook_secret": None, "format": "slack"}])
async def test_slack_body_without_a_secret_has_no_signature(daemon: RunningDaemon, receiver: Receiver) -> None:
    await daemon.ask("s<1>", "alice", [q("Use <b>tags</b> & more?", "yes", "no", header="Tags")])
    [got] = await receiver.wait_for(1)
    assert "x-askd-signature" not in got.header_names and "webhook-signature" not in got.header_names
    body = got.json()
    assert set(body) == {"text", "blocks"}
    text = body["text"]
    assert "*Tags*: Use &lt;b&gt;tags&lt;/b&gt; &amp; more? (yes / no)" in text
    assert "*alice*" in text and "session s&lt;1&gt;" in text
    assert f"<{daemon.url}/?session=s%3C1%3E|Open the askd inbox to answer>" in text


@pytest.mark.parametrize("notify_settings", [{"webhook_secret": None, "format": "slack"}])
async def test_slack_body_turns_question_markdown_into_mrkdwn(daemon: RunningDaemon, receiver: Receiver) -> None:
    await daemon.ask("s1", "alice", [q("Merge **now**? See [the PR](https://git.example/pr/1) and `main`.", "yes")])
    [got] = await receiver.wait_for(1)
    assert "• Merge *now*? See <https://git.example/pr/1|the PR> and `main`. (yes)" in got.json()["text"]


async def test_a_receiver_that_fails_then_succeeds_gets_retries(daemon: RunningDaemon, receiver: Receiver) -> None:
    receiver.script = [500, 503, 429, 200]
    asked = await daemon.ask("s1", "alice")
    got = await receiver.wait_for(4)
    assert len({d.body for d in got}) == 1  # the same body each time
    assert all(d.signed_with(HOOK_SECRET) and "x-askd-signature" not in d.header_names for d in got)
    await eventually(lambda: request_of(daemon, "s1", asked["requestId"]).notified, what="notified")
    assert await metric(daemon, "askd_webhook_retried_total") == 3
    assert await metric(daemon, "askd_webhook_delivered_total") == 1
    await receiver.quiet(QUIET, 4)


async def test_a_receiver_that_hangs_times_out_and_is_retried_without_slowing_asks(
    daemon: RunningDaemon, receiver: Receiver
) -> None:
    receiver.script = [HANG]
    started = time.monotonic()
    first = await daemon.ask("s1", "alice")
    await receiver.wait_for(1)
    for i in range(5):  # while the sender waits on a hung receiver, asks answer at once
        await daemon.ask(f"s{i + 2}", "alice")
    assert time.monotonic() - started < TIMEOUT
    got = await receiver.wait_for(7)
    retried = [d for d in got if d.json()["requestId"] == first["requestId"]]
    assert len(retried) == 2
    assert retried[1].at - retried[0].at >= TIMEOUT  # the attempt ran into its limit first
    await eventually(lambda: request_of(daemon, "s1", first["requestId"]).notified, what="notified")
    assert await metric(daemon, "askd_webhook_delivered_total") == 6


@pytest.mark.parametrize("status", [400, 401, 404, 410])
async def test_a_4xx_is_not_retried(daemon: RunningDaemon, receiver: Receiver, status: int) -> None:
    receiver.script = [status]
    asked = await daemon.ask("s1", "alice")
    await receiver.wait_for(1)
    await eventually(lambda: metric(daemon, "askd_webhook_failed_total", reason="rejected"), what="failed")
    await receiver.quiet(QUIET, 1)
    assert not request_of(daemon, "s1", asked["requestId"]).notified
    assert await metric(daemon, "askd_webhook_retried_total") == 0


async def test_it_gives_up_after_ten_attempts(daemon: RunningDaemon, receiver: Receiver) -> None:
    receiver.then = 502
    await daemon.ask("s1", "alice")
    await receiver.wait_for(10)
    await eventually(lambda: metric(daemon, "askd_webhook_failed_total", reason="exhausted"), what="exhausted")
    await receiver.quiet(QUIET, 10)
    assert await metric(daemon, "askd_webhook_retried_total") == 9


async def test_retries_stop_when_the_question_ends(daemon: RunningDaemon, receiver: Receiver, fast_retry: Retry) -> None:
    assert daemon.daemon.notifier is not None
    daemon.daemon.notifier.retry = Retry(base=0.3, cap=0.3)  # time to answer between attempts
    receiver.then = 500
    asked = await daemon.ask("s1", "alice", [q("Deploy?", "yes", "no")])
    await receiver.wait_for(1)
    r = await daemon.admin("POST", f"/admin/v1/sessions/s1/questions/{asked['requestId']}/answer", json={"answers": {"Deploy?": "yes"}})
    assert r.status_code == 200
    await eventually(lambda: daemon.daemon.notifier.held() == 0, what="the delivery dropped")  # type: ignore[union-attr]
    await receiver.quiet(QUIET, 1)


@pytest.mark.parametrize("notify_settings", [{"after_seconds": 0.5}])
async def test_after_seconds_waits_and_skips_what_was_answered_meanwhile(daemon: RunningDaemon, receiver: Receiver) -> None:
    answered = await daemon.ask("s1", "alice", [q("Deploy?", "yes", "no")])
    kept = await daemon.ask("s2", "alice")
    asked_at = asyncio.get_running_loop().time()
    r = await daemon.admin("POST", f"/admin/v1/sessions/s1/questions/{answered['requestId']}/answer", json={"answers": {"Deploy?": "no"}})
    assert r.status_code == 200
    [got] = await receiver.wait_for(1)
    assert got.at - asked_at >= 0.45
    assert got.json()["requestId"] == kept["requestId"]
    await receiver.quiet(QUIET, 1)


@pytest.mark.parametrize("notify_settings", [{"after_seconds": 0.3, "only_offline": True}])
async def test_only_offline_sends_only_for_users_with_no_connection_at_that_moment(daemon: RunningDaemon, receiver: Receiver) -> None:
    alice = await daemon.connect("alice")
    await daemon.ask("s1", "alice")  # alice stays online
    bob = await daemon.connect("bob")
    asked = await daemon.ask("s2", "bob")
    await bob.close()  # bob is gone when it comes due
    [got] = await receiver.wait_for(1)
    assert got.json()["requestId"] == asked["requestId"]
    await receiver.quiet(0.4, 1)
    assert (await alice.expect("ask_user_questions"))["sessionId"] == "s1"  # she was online all along


@pytest.mark.parametrize("notify_settings", [{"webhook_url": "http://127.0.0.1:9/"}])
async def test_an_unreachable_receiver_changes_nothing_for_the_ask(daemon: RunningDaemon) -> None:
    asked = await daemon.ask("s1", "alice", [q("Deploy?", "yes", "no")], params={"wait": 0.05})
    assert asked["status"] == "pending"
    await eventually(lambda: metric(daemon, "askd_webhook_retried_total"), what="a retry")
    tab = await daemon.connect("alice")
    [_, pushed] = await tab.subscribe("s1")
    assert pushed["payload"]["requestId"] == asked["requestId"]


async def test_a_full_queue_drops_and_counts_the_delivery(daemon: RunningDaemon, receiver: Receiver) -> None:
    notifier = daemon.daemon.notifier
    assert notifier is not None
    notifier._max_held = 1
    receiver.script = [HANG]
    await daemon.ask("s1", "alice")
    await receiver.wait_for(1)
    asked = await daemon.ask("s2", "alice")  # still 201 at once
    assert asked["status"] == "pending"
    assert await metric(daemon, "askd_webhook_failed_total", reason="dropped") == 1


async def test_the_webhook_secret_and_url_path_never_reach_the_logs(
    daemon: RunningDaemon,
    receiver: Receiver,
    log_text: io.StringIO,  # noqa: F811
) -> None:
    receiver.script = [500, 404]
    await daemon.ask("s1", "alice")
    await receiver.wait_for(2)
    await eventually(lambda: metric(daemon, "askd_webhook_failed_total", reason="rejected"), what="failed")
    text = log_text.getvalue()
    assert "webhook.retry" in text and "webhook.failed" in text
    assert f"127.0.0.1:{receiver.port}" in text
    for secret in (HOOK_SECRET, "s3cr3tpath", SECRET):
        assert secret not in text


def docs_receiver() -> dict[str, Any]:
    """The receiver of docs/notify.md, as its code block is written."""
    text = (Path(__file__).resolve().parents[3] / "docs" / "notify.md").read_text()
    [code] = [block for block in re.findall(r"```python\n(.*?)```", text, re.S) if "def verify" in block]
    namespace: dict[str, Any] = {"__name__": "docs_receiver"}
    exec(compile(code, "docs/notify.md", "exec"), namespace)
    return namespace


async def test_the_receiver_in_the_docs_takes_a_real_delivery_and_refuses_a_forged_one(
    daemon: RunningDaemon, receiver: Receiver, capsys: pytest.CaptureFixture[str]
) -> None:
    doc = docs_receiver()
    doc["SECRET"] = HOOK_SECRET
    server = ThreadingHTTPServer(("127.0.0.1", 0), doc["Hook"])
    threading.Thread(target=server.serve_forever, daemon=True).start()
    notifier = daemon.daemon.notifier
    assert notifier is not None
    notifier.url = f"http://127.0.0.1:{server.server_address[1]}/"
    try:
        asked = await daemon.ask("s1", "alice", [q("Which database?", "PostgreSQL", "SQLite")])
        await eventually(lambda: request_of(daemon, "s1", asked["requestId"]).notified, what="accepted by the docs' receiver")
        assert f"alice is asked: Which database?  (answer at {daemon.url}/?session=s1)" in capsys.readouterr().out
        async with httpx.AsyncClient() as http:
            stamp = str(int(time.time()))
            forged = {"webhook-id": "msg_x", "webhook-timestamp": stamp, "webhook-signature": "v1,AAAA"}
            assert (await http.post(notifier.url, content=b'{"requestId": "x"}', headers=forged)).status_code == 401
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.parametrize("notify_settings", [{"only_offline": True}])
async def test_a_team_question_carries_its_audience_and_only_offline_looks_at_all_of_it(
    daemon: RunningDaemon, receiver: Receiver
) -> None:
    r = await daemon.admin("PUT", "/admin/v1/groups/oncall", json={"members": ["bob", "carol"]})
    assert r.status_code == 200
    await daemon.connect("carol")  # one member online: no webhook
    body = {"to": ["group:oncall"], "questions": [q("Seen?")]}
    r = await daemon.http.post(f"{daemon.url}/v1/sessions/s1/questions", json=body, headers=daemon.agent_headers)
    assert r.status_code == 201
    await daemon.admin("PUT", "/admin/v1/groups/leads", json={"members": ["erin"]})
    body = {"to": ["group:leads", "dave"], "questions": [q("Away?")]}
    r = await daemon.http.post(f"{daemon.url}/v1/sessions/s2/questions", json=body, headers=daemon.agent_headers)
    away = r.json()["requestId"]
    [got] = await receiver.wait_for(1)
    await receiver.quiet(QUIET, 1)
    sent = got.json()
    assert (sent["requestId"], sent["to"], sent["users"], "userId" in sent) == (away, ["dave", "group:leads"], ["dave", "erin"], False)
