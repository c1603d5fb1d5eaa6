"""``askd notify test`` against a real receiver: what it sends, what it
prints, and its exit codes."""

from __future__ import annotations

import json

import pytest

from tests.cli.test_commands import askd, one_error_line
from tests.receiver import HANG, Receiver, receiver  # noqa: F401  (the fixture)

HOOK_SECRET = "whsec-cli-0123456789"


@pytest.fixture
def env(receiver: Receiver) -> dict[str, str]:
    return {
        "ASKD_NOTIFY__WEBHOOK_URL": receiver.url,
        "ASKD_NOTIFY__WEBHOOK_SECRET": HOOK_SECRET,
        "ASKD_NOTIFY__TIMEOUT_SECONDS": "0.5",
        "ASKD_PUBLIC_URL": "https://askd.example.com/inbox/",
    }


async def test_it_sends_a_signed_sample_and_prints_the_answer(receiver: Receiver, env: dict[str, str]) -> None:
    r = await askd("notify", "test", "--user", "alice", env=env)
    assert r.exit_code == 0, r.stderr
    [got] = receiver.got
    assert got.signed_with(HOOK_SECRET)
    body = got.json()
    assert body["event"] == "question.asked" and body["test"] is True
    assert body["userId"] == "alice"
    assert body["url"] == "https://askd.example.com/inbox/?session=askd-notify-test"
    assert body["to"] == body["users"] == ["alice"]
    assert set(body) == {"event", "userId", "to", "users", "sessionId", "requestId", "questions", "createdAt", "expiresAt", "url", "test"}
    out = r.stdout.splitlines()
    assert out[0] == f"Sent a sample question (json, signed) to http://127.0.0.1:{receiver.port}/…"
    assert out[1].startswith("The receiver answered 200 OK in ") and out[1].endswith(" ms: 'ok'")
    assert "s3cr3tpath" not in r.stdout + r.stderr  # the URL's path is its secret


async def test_slack_format_from_the_flag(receiver: Receiver, env: dict[str, str]) -> None:
    r = await askd("notify", "test", "--format", "slack", env=env)
    assert r.exit_code == 0, r.stderr
    text = receiver.got[0].json()["text"]
    assert "*askd test*: This is a test" in text and "(Yes / No)" in text


async def test_a_4xx_is_one_line_and_exit_1(receiver: Receiver, env: dict[str, str]) -> None:
    receiver.script = [404]
    line = one_error_line(await askd("notify", "test", env=env))
    assert line == f"askd: the webhook at http://127.0.0.1:{receiver.port}/… answered 404 Not Found: 'error 404'"
    assert len(receiver.got) == 1  # one attempt, never retried


@pytest.mark.parametrize("status", [401, 403])
async def test_a_refusal_without_a_secret_says_nothing_was_signed(receiver: Receiver, env: dict[str, str], status: int) -> None:
    receiver.script = [status]
    unsigned = {k: v for k, v in env.items() if k != "ASKD_NOTIFY__WEBHOOK_SECRET"}
    line = one_error_line(await askd("notify", "test", env=unsigned))
    assert line.endswith("; no notify.webhook_secret (ASKD_NOTIFY__WEBHOOK_SECRET) is configured, so nothing was signed")
    receiver.script = [status]
    signed = one_error_line(await askd("notify", "test", env=env))
    assert "nothing was signed" not in signed  # signed, and refused anyway: another cause


async def test_a_receiver_that_hangs_times_out(receiver: Receiver, env: dict[str, str]) -> None:
    receiver.script = [HANG]
    line = one_error_line(await askd("notify", "test", env=env))
    assert line.endswith("did not answer: no answer within 0.5 s")


async def test_json_output_for_scripts(receiver: Receiver, env: dict[str, str]) -> None:
    r = await askd("notify", "test", "--json", env=env)
    assert r.exit_code == 0
    out = json.loads(r.stdout)
    assert out["ok"] is True and out["status"] == 200 and out["body"] == "ok" and out["signed"] is True
    assert out["url"] == f"http://127.0.0.1:{receiver.port}/…"
    receiver.script = [503]
    r = await askd("notify", "test", "--json", env=env)
    assert r.exit_code == 1 and r.stderr == ""
    assert json.loads(r.stdout)["status"] == 503


async def test_without_a_webhook_or_with_a_bad_url_it_says_so() -> None:
    line = one_error_line(await askd("notify", "test"), code=2)
    assert "set notify.webhook_url (ASKD_NOTIFY__WEBHOOK_URL)" in line
    line = one_error_line(await askd("notify", "test", "--webhook-url", "ftp://example.com/"), code=2)
    assert line == "askd: --webhook-url: URL scheme should be 'http' or 'https'"
    line = one_error_line(await askd("notify", "test", "--webhook-url", "http://127.0.0.1:9/"))
    assert line.startswith("askd: the webhook at http://127.0.0.1:9/… did not answer: cannot connect")
