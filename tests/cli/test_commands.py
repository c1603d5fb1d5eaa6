"""Every CLI command through Typer's test runner against a live daemon.

The daemon fixture writes ``askd.json`` into ``ASKD_STATE_DIR`` and its
secret is given as ``ASKD_AUTH__SECRET``, so the commands find it the way
they do on a user's machine, with no URL or token flags. The runner is
blocking, so it runs in a thread while the daemon serves in the loop."""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

import jwt
import pytest
from typer.testing import CliRunner, Result

from askd import __version__, tokens
from askd.cli.common import CliError
from askd.cli.main import app
from tests.client.waiting import pending_on_daemon
from tests.conftest import SECRET, RunningDaemon, eventually, q
from tests.receipts.independent import receipted

runner = CliRunner()


@pytest.fixture
def local(daemon: RunningDaemon, monkeypatch: pytest.MonkeyPatch) -> RunningDaemon:
    monkeypatch.setenv("ASKD_AUTH__SECRET", SECRET)
    return daemon


async def askd(*args: str, env: dict[str, str] | None = None) -> Result:
    return await asyncio.to_thread(runner.invoke, app, list(args), env=env)


def one_error_line(r: Result, code: int = 1) -> str:
    assert r.exit_code == code, (r.exit_code, r.stdout, r.stderr)
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("askd: "), r.stderr
    assert "Traceback" not in r.stderr
    return lines[0]


async def answer_via_admin(daemon: RunningDaemon, answers: dict[str, Any]) -> None:
    [item] = await pending_on_daemon(daemon)
    r = await daemon.admin("POST", f"/admin/v1/sessions/{item['sessionId']}/questions/{item['requestId']}/answer", json={"answers": answers})
    assert r.status_code == 200, r.text


# ---- pending ------------------------------------------------------------


async def test_pending_list_table_and_json(local: RunningDaemon) -> None:
    r = await askd("pending", "list")
    assert (r.exit_code, r.stdout) == (0, "No pending questions.\n")
    a = await local.ask("s1", "alice", [q("Which database?", "PostgreSQL", "SQLite"), q("Why?")])
    b = await local.ask("s2", "bob", [q("Deploy [now]?")])
    r = await askd("pending", "list")
    assert r.exit_code == 0
    lines = r.stdout.splitlines()
    assert lines[0].split() == ["SESSION", "TO", "REQUEST", "QUESTION", "ASKED", "EXPIRES"]
    assert lines[1].split()[:3] == ["s1", "alice", a["requestId"]]
    assert "Which database? [PostgreSQL/SQLite] (+1 more)" in lines[1]
    assert "Deploy [now]?" in lines[2]  # user text is not taken for markup

    r = await askd("pending", "list", "--json")
    items = json.loads(r.stdout)
    assert [i["requestId"] for i in items] == [a["requestId"], b["requestId"]]
    assert set(items[0]) == {"sessionId", "userId", "to", "requestId", "questions", "metadata", "createdAt", "expiresAt"}
    for flags, expected in ((["--user", "bob"], [b]), (["--session", "s1"], [a]), (["--session", "s1", "--user", "bob"], [])):
        r = await askd("pending", "list", "--json", *flags)
        assert [i["requestId"] for i in json.loads(r.stdout)] == [e["requestId"] for e in expected]


async def test_pending_shows_markdown_readably(local: RunningDaemon) -> None:
    question = "Apply **this** patch?\n\nIt touches `db.py` <b>and</b> \x1b[31mnothing else."
    options = [
        {"label": "Apply", "description": "Runs *now*.", "preview": "```diff\n-POOL = 5\n+POOL = 20\n```"},
        {"label": "Skip", "description": "[docs](https://docs.example/x) [bad](javascript:alert(1))"},
    ]
    a = await local.ask("s1", "alice", [{"question": question, "header": "Patch", "options": options}])
    r = await askd("pending", "list")
    assert "Apply **this** patch? … [Apply/Skip]" in r.stdout  # one line of the source per question

    r = await askd("pending", "show", "s1", a["requestId"])
    assert r.exit_code == 0, r.stdout
    out = r.stdout
    assert "Apply this patch?" in out and "**" not in out  # rendered, not raw
    assert "<b>and</b>" in out  # raw HTML stays text, as on the page
    assert "\x1b" not in out  # no escape sequence reaches the terminal
    assert "-POOL = 5" in out and "+POOL = 20" in out and "Runs now." in out
    assert "docs (https://docs.example/x)" in out  # a link shows where it goes
    assert "[bad](javascript:alert(1))" in out  # a refused link stays text
    assert out.index("Patch") < out.index("Apply this") < out.index("• Apply") < out.index("• Skip")

    r = await askd("pending", "show", "s1", a["requestId"], "--json")
    assert json.loads(r.stdout)["questions"][0]["options"][0]["preview"] == options[0]["preview"]


async def test_pending_answer_with_answer_flags(local: RunningDaemon) -> None:
    asked = await local.ask("s1", "alice", [q("Is x=1 ok?", "yes", "no"), q("Extras", "a", "b", "c", multi=True, header="Pick")])
    rid = asked["requestId"]
    r = await askd("pending", "answer", "s1", rid, "--answer", "Is x=1 ok?=no", "--answer", "Pick=a", "--answer", "Extras=c=3")
    assert (r.exit_code, r.stdout) == (0, f"Answered {rid} in session s1.\n"), r.stderr
    result = (await local.result("s1", rid)).json()
    assert result["answers"] == {"Is x=1 ok?": "no", "Extras": ["a", "c=3"]}


async def test_pending_answer_with_answers_json(local: RunningDaemon) -> None:
    asked = await local.ask("s1", "alice", [q("Deploy?")])
    r = await askd("pending", "answer", "s1", asked["requestId"], "--answers", '{"Deploy?": "yes"}', "--json")
    assert r.exit_code == 0 and json.loads(r.stdout) == {"accepted": True, "answers": {"Deploy?": "yes"}}
    assert (await local.result("s1", asked["requestId"])).json()["status"] == "answered"


@pytest.mark.parametrize(
    "flags",
    [
        [],
        ["--answers", "{}", "--answer", "Deploy?=y"],
        ["--answers", "{not json"],
        ["--answers", '["a"]'],
        ["--answer", "Nope?=y"],
        ["--answer", "Deploy?=a", "--answer", "Deploy?=b"],
    ],
    ids=["none", "both", "bad-json", "not-object", "unknown-question", "twice-single"],
)
async def test_pending_answer_usage_errors_exit_2(local: RunningDaemon, flags: list[str]) -> None:
    asked = await local.ask("s1", "alice", [q("Deploy?")])
    r = await askd("pending", "answer", "s1", asked["requestId"], *flags)
    one_error_line(r, 2)
    assert (await local.result("s1", asked["requestId"])).json()["status"] == "pending"


async def test_pending_answer_errors_from_the_daemon(local: RunningDaemon) -> None:
    line = one_error_line(await askd("pending", "answer", "s1", "nope", "--answer", "Deploy?=y"))
    assert "no pending question nope in session s1" in line
    line = one_error_line(await askd("pending", "answer", "s1", "nope", "--answers", '{"Deploy?": "y"}'))
    assert "404 not_pending" in line
    asked = await local.ask("s1", "alice", [q("Deploy?")])
    line = one_error_line(await askd("pending", "answer", "s1", asked["requestId"], "--answers", '{"Deploy?": ["a"]}'))
    assert "400 invalid_answer" in line


# ---- group ----------------------------------------------------------------


async def test_group_set_list_delete(local: RunningDaemon) -> None:
    r = await askd("group", "list")
    assert (r.exit_code, r.stdout) == (0, "No groups.\n")
    r = await askd("group", "set", "oncall", "bob", "alice", "bob")
    assert (r.exit_code, r.stdout) == (0, "Group oncall: alice, bob.\n")
    r = await askd("group", "set", "leads", "--json")
    assert json.loads(r.stdout) == {"group": "leads", "members": []}
    r = await askd("group", "list", "--json")
    assert json.loads(r.stdout) == [{"group": "leads", "members": []}, {"group": "oncall", "members": ["alice", "bob"]}]
    r = await askd("group", "list")
    assert r.stdout.splitlines()[0].split() == ["GROUP", "MEMBERS"]
    assert r.stdout.splitlines()[2].split() == ["oncall", "alice,", "bob"]
    r = await askd("group", "delete", "leads")
    assert (r.exit_code, r.stdout) == (0, "Deleted group leads.\n")
    assert "404 not_found" in one_error_line(await askd("group", "delete", "leads"))
    assert [g["group"] for g in (await local.admin("GET", "/admin/v1/groups")).json()["groups"]] == ["oncall"]


# ---- connections, disconnect, cancel ------------------------------------


async def test_connections_list(local: RunningDaemon) -> None:
    r = await askd("connections", "list")
    assert (r.exit_code, r.stdout) == (0, "No connections.\n")
    tab = await local.connect("alice")
    await tab.subscribe("*")
    await local.connect("bob")
    r = await askd("connections", "list", "--json", "--user", "alice")
    [conn] = json.loads(r.stdout)
    assert conn["userId"] == "alice" and conn["subscriptions"] == ["*"]
    assert set(conn) == {"connectionId", "userId", "subscriptions", "connectedAt", "remote", "node"}
    r = await askd("connections", "list")
    assert r.stdout.splitlines()[0].split() == ["CONNECTION", "USER", "SUBSCRIPTIONS", "CONNECTED", "REMOTE", "NODE"]
    assert conn["connectionId"] in r.stdout and "bob" in r.stdout


async def test_disconnect_aborts_and_keeps_questions(local: RunningDaemon) -> None:
    tab = await local.connect("alice")
    other = await local.connect("bob")
    asked = await local.ask("s1", "alice", [q("Deploy?")])
    await tab.expect("ask_user_questions")
    r = await askd("disconnect", "--user", "alice")
    assert (r.exit_code, r.stdout) == (0, "Disconnected 1 connection (abort).\n")
    with pytest.raises(Exception) as err:
        await tab.recv()
    assert getattr(err.value, "rcvd", None) is None  # no close frame: the link just died
    assert (await local.result("s1", asked["requestId"])).json()["status"] == "pending"
    await other.send({"type": "ping"})
    await other.expect("pong")


async def test_disconnect_clean_sends_1001(local: RunningDaemon) -> None:
    tab = await local.connect("alice")
    r = await askd("disconnect", "--all", "--clean", "--json")
    assert json.loads(r.stdout) == {"disconnected": 1, "mode": "close"}
    with pytest.raises(Exception) as err:
        await tab.recv()
    assert err.value.rcvd.code == 1001  # type: ignore[attr-defined]


async def test_disconnect_by_connection_and_session(local: RunningDaemon) -> None:
    await local.connect("alice")
    t2 = await local.connect("alice")
    await local.ask("s1", "alice", [q("Deploy?")])
    await t2.subscribe("s1")
    conns = (await local.admin("GET", "/admin/v1/connections")).json()["connections"]
    plain = next(c["connectionId"] for c in conns if not c["subscriptions"])
    r = await askd("disconnect", "--session", "s1", "--json")
    assert json.loads(r.stdout)["disconnected"] == 1
    r = await askd("disconnect", "--connection", plain, "--json")
    assert json.loads(r.stdout)["disconnected"] == 1
    assert (await local.admin("GET", "/admin/v1/connections")).json()["connections"] == []


async def test_disconnect_needs_a_target(local: RunningDaemon) -> None:
    one_error_line(await askd("disconnect"), 2)


async def test_cancel(local: RunningDaemon) -> None:
    a = await local.ask("child", "alice", [q("Deploy?")], parentSessionId="parent")
    r = await askd("cancel", "parent")
    assert (r.exit_code, r.stdout) == (0, "Cancelled 1 question in session parent and its sub-sessions.\n")
    assert (await local.result("child", a["requestId"])).json()["error"] == "Session cancelled"
    r = await askd("cancel", "parent", "--json")
    assert json.loads(r.stdout) == {"cancelled": 0}


async def test_withdraw(local: RunningDaemon) -> None:
    a = await local.ask("s1", "alice", [q("Deploy?")])
    r = await askd("withdraw", "s1", a["requestId"])
    done = f"Question {a['requestId']} of session s1: cancelled (Withdrawn by agent).\n"
    assert (r.exit_code, r.stdout) == (0, done), r.stderr
    assert (await local.result("s1", a["requestId"])).json()["error"] == "Withdrawn by agent"
    r = await askd("withdraw", "s1", a["requestId"], "--json")
    assert json.loads(r.stdout)["status"] == "cancelled"
    b = await local.ask("s1", "alice", [q("Deploy?")])
    await answer_via_admin(local, {"Deploy?": "yes"})
    r = await askd("withdraw", "s1", b["requestId"])
    assert r.stdout == f"Question {b['requestId']} of session s1: answered.\n"
    # An id that never existed: unknown, with only the guesses that can be true (no memory store here).
    assert one_error_line(await askd("withdraw", "s1", "nope")) == (
        "askd: unknown question nope in session s1: it was never asked there,"
        " or it ended more than 600 s ago and its result was forgotten"
    )


async def test_a_group_command_typed_without_its_group_is_pointed_to() -> None:
    r = await askd("answer", "s1", "r1", "--answer", "Deploy?=yes")
    assert r.exit_code == 2
    assert "No such command 'answer'. Did you mean `askd pending answer`?" in r.stderr


# ---- ask ------------------------------------------------------------------


async def test_ask_prints_the_answer(local: RunningDaemon) -> None:
    task = asyncio.create_task(askd("ask", "--user", "alice", "--session", "s1", "--question", "Which database?", "--option", "PostgreSQL", "--option", "SQLite"))
    [item] = await pending_on_daemon(local)
    assert item["questions"] == [q("Which database?", "PostgreSQL", "SQLite")]
    await answer_via_admin(local, {"Which database?": "SQLite"})
    r = await asyncio.wait_for(task, 10)
    assert (r.exit_code, r.stdout) == (0, "SQLite\n"), r.stderr


async def test_ask_multi_with_json(local: RunningDaemon) -> None:
    args = ["ask", "--user", "alice", "--session", "s1", "--question", "Extras", "--option", "a", "--option", "b", "--multi", "--header", "Pick", "--json"]
    task = asyncio.create_task(askd(*args))
    [item] = await pending_on_daemon(local)
    assert item["questions"] == [q("Extras", "a", "b", multi=True, header="Pick")]
    await answer_via_admin(local, {"Extras": ["a", "b"]})
    r = await asyncio.wait_for(task, 10)
    assert r.exit_code == 0
    assert receipted(json.loads(r.stdout)) == {"requestId": item["requestId"], "sessionId": "s1", "status": "answered", "answers": {"Extras": ["a", "b"]}, "answeredBy": None, "via": "admin"}


async def test_ask_a_team_with_an_escalation_step_and_see_it_pending(local: RunningDaemon) -> None:
    await local.admin("PUT", "/admin/v1/groups/oncall", json={"members": ["bob"]})
    await local.admin("PUT", "/admin/v1/groups/leads", json={"members": ["dave"]})
    args = ["ask", "--to", "group:oncall", "--to", "alice", "--escalate", "0.3=group:leads,erin", "--session", "s1", "--question", "Deploy?", "--json"]
    task = asyncio.create_task(askd(*args))
    await eventually(lambda: any(r.escalations for r in local.daemon.hub.registry.pending()), what="the step taken")
    r = await askd("pending", "list")
    assert "alice, group:oncall, group:leads, erin (escalated 1)" in " ".join(r.stdout.split()), r.stdout
    [item] = await pending_on_daemon(local)
    assert (item["to"], item["escalations"]) == (["alice", "group:oncall", "group:leads", "erin"], 1)
    await answer_via_admin(local, {"Deploy?": "y"})
    r = await asyncio.wait_for(task, 10)
    assert r.exit_code == 0 and json.loads(r.stdout)["escalations"] == 1


async def test_ask_with_reminders(local: RunningDaemon) -> None:
    base = ["ask", "--user", "alice", "--question", "Deploy?", "--no-wait"]
    for session, flags, remind in (
        ("s1", ["--remind-every", "120", "--remind-times", "3"], (120.0, 3)),
        ("s2", ["--remind-every", "60"], (60.0, 1)),
        ("s3", [], None),
    ):
        r = await askd(*base, "--session", session, *flags)
        assert r.exit_code == 0, r.stderr
        req = local.daemon.hub.registry.get(session, r.stdout.strip())
        assert req is not None and req.remind == remind
    r = await askd(*base, "--session", "s4", "--remind-every", "30")
    assert r.exit_code != 0 and "remind.everySeconds" in r.stderr, r.stderr


@pytest.mark.parametrize(
    "flags",
    [[], ["--user", "alice", "--to", "bob"], ["--user", "alice", "--escalate", "x=bob"], ["--user", "alice", "--escalate", "30="],
     ["--user", "alice", "--remind-times", "2"]],
)
async def test_ask_audience_usage_errors_exit_2(local: RunningDaemon, flags: list[str]) -> None:
    r = await askd("ask", "--session", "s1", "--question", "Deploy?", *flags)
    assert r.exit_code == 2, r.stdout


async def test_ask_timeout_exits_3(local: RunningDaemon) -> None:
    r = await askd("ask", "--user", "alice", "--session", "s1", "--question", "Anyone?", "--timeout", "0.3")
    assert r.stdout == ""
    assert "Timed out" in one_error_line(r, 3)
    r = await askd("ask", "--user", "alice", "--session", "s2", "--question", "Anyone?", "--timeout", "0.3", "--json")
    assert r.exit_code == 3 and json.loads(r.stdout)["status"] == "timeout"


async def test_ask_cancelled_exits_4(local: RunningDaemon) -> None:
    task = asyncio.create_task(askd("ask", "--user", "alice", "--session", "s1", "--question", "Deploy?"))
    await pending_on_daemon(local)
    await local.admin("POST", "/admin/v1/sessions/s1/cancel")
    r = await asyncio.wait_for(task, 10)
    assert "Session cancelled" in one_error_line(r, 4)


async def test_ask_no_wait_prints_the_request_id(local: RunningDaemon) -> None:
    r = await askd("ask", "--user", "alice", "--session", "s1", "--question", "Deploy?", "--no-wait")
    [item] = await pending_on_daemon(local)
    assert (r.exit_code, r.stdout) == (0, item["requestId"] + "\n")


async def test_ask_errors(local: RunningDaemon) -> None:
    await local.ask("s1", "bob", [q("Deploy?")])
    line = one_error_line(await askd("ask", "--user", "alice", "--session", "s1", "--question", "Deploy?"))
    assert "409 session_owner_mismatch" in line
    line = one_error_line(await askd("ask", "--url", "http://127.0.0.1:1", "--user", "alice", "--session", "s1", "--question", "Deploy?"))
    assert "cannot reach askd at http://127.0.0.1:1" in line
    r = await askd("ask", "--user", "alice", "--question", "Deploy?")
    assert r.exit_code == 2 and "Missing option '--session'" in r.stderr  # Typer's usage error


# ---- status, version, help -------------------------------------------------


async def test_status_up(local: RunningDaemon) -> None:
    await local.connect("alice")
    await local.ask("s1", "alice", [q("Deploy?")])
    r = await askd("status")
    assert r.exit_code == 0
    assert f"askd {__version__} is up" in r.stdout
    assert f":{local.daemon.port}" in r.stdout and local.admin_url in r.stdout
    assert "1 connection of 1 user" in r.stdout and "1 pending" in r.stdout
    assert ", 0 cancelled, 0 declined\n" in r.stdout
    assert f"node     {local.daemon.hub.node_id}   store sqlite\n" in r.stdout
    assert f"  inbox    http://127.0.0.1:{local.daemon.port}/\n" in r.stdout
    data = json.loads((await askd("status", "--json")).stdout)
    assert data["up"] is True and data["version"] == __version__
    assert (data["port"], data["adminPort"], data["pending"], data["connections"]) == (local.daemon.port, local.daemon.admin_port, 1, 1)
    assert data["uptimeSeconds"] >= 0
    assert (data["node"], data["store"], data["storeStatus"]) == (local.daemon.hub.node_id, "sqlite", "ok")
    assert data["publicUrl"] == f"http://127.0.0.1:{local.daemon.port}/"
    local.daemon.hub.store._db.execute("PRAGMA query_only = ON")  # type: ignore[attr-defined]
    await local.ask("s2", "alice", [q("Refused?")], expect=503)  # the store fails: degraded
    # Still refusing while status looks: the daemon's probe writes, and would
    # find the store mended before a slow `askd status` had started.
    r = await askd("status")
    local.daemon.hub.store._db.execute("PRAGMA query_only = OFF")  # type: ignore[attr-defined]
    assert r.exit_code == 0 and "(DEGRADED: it refuses writes)" in r.stdout, r.stdout


async def test_status_counts_declined_questions(local: RunningDaemon) -> None:
    rid = (await local.ask("s1", "alice", [q("Deploy?")]))["requestId"]
    r = await local.admin("POST", f"/admin/v1/sessions/s1/questions/{rid}/decline", json={"reason": "not mine"})
    assert r.status_code == 200, r.text
    r = await askd("status")
    assert r.exit_code == 0
    assert "questions 0 pending, 1 asked, 0 answered, 0 timed out, 0 cancelled, 1 declined\n" in r.stdout, r.stdout
    assert json.loads((await askd("status", "--json")).stdout)["declined"] == 1


async def test_status_down_exits_1(local: RunningDaemon) -> None:
    r = await askd("status", "--admin-url", "http://127.0.0.1:1")
    assert r.exit_code == 1 and "askd is not running" in r.stdout
    r = await askd("status", "--json", "--admin-url", "http://127.0.0.1:1")
    assert r.exit_code == 1 and json.loads(r.stdout)["up"] is False


async def test_version_and_completion() -> None:
    r = await askd("--version")
    assert (r.exit_code, r.stdout) == (0, f"askd {__version__}\n")
    assert "--install-completion" in (await askd("--help")).stdout


# ---- finding the daemon, and errors ------------------------------------------


async def test_flags_win_over_discovery(daemon: RunningDaemon) -> None:
    # no secret in the environment: the commands need the flags
    line = one_error_line(await askd("pending", "list"))
    assert "no admin token" in line and "--token" in line
    r = await askd("--admin-url", daemon.admin_url, "--token", daemon.token("admin"), "pending", "list")
    assert r.exit_code == 0, r.stderr
    r = await askd("pending", "list", "--admin-url", daemon.admin_url, "--token", daemon.token("admin"))
    assert r.exit_code == 0, r.stderr
    r = await askd("pending", "list", env={"ASKD_ADMIN_URL": daemon.admin_url, "ASKD_ADMIN_TOKEN": daemon.token("admin")})
    assert r.exit_code == 0, r.stderr
    line = one_error_line(await askd("pending", "list", "--token", daemon.token("admin"), env={"ASKD_ADMIN_URL": "http://127.0.0.1:1"}))
    assert "cannot reach askd at http://127.0.0.1:1" in line
    asked = await daemon.ask("s1", "alice", [q("Deploy?")])
    r = await askd("ask", "--url", daemon.url, "--token", daemon.token("agent"), "--user", "alice", "--session", "s1", "--question", "Again?", "--no-wait")
    assert r.exit_code == 0 and r.stdout.strip() != asked["requestId"]


async def test_wrong_token_down_daemon_and_debug(local: RunningDaemon) -> None:
    line = one_error_line(await askd("pending", "list", "--token", "not-a-token"))
    assert line == "askd: the token was refused (401): invalid token: it is not a valid askd token; it was cut or mistyped"
    forged = tokens.issue("another askd's secret, 32 characters or more", "admin")
    line = one_error_line(await askd("pending", "list", "--token", forged))
    assert line.startswith("askd: the token was refused (401): invalid token: it was not signed with this askd's secret")
    expired = tokens.issue(SECRET, "admin", ttl=-60)
    assert one_error_line(await askd("pending", "list", "--token", expired)) == "askd: the token was refused (401): token expired: mint a new one"
    line = one_error_line(await askd("connections", "list", "--token", local.token("agent")))
    assert "role" in line and "403" in line
    line = one_error_line(await askd("cancel", "s1", "--admin-url", "http://127.0.0.1:1"))
    assert "is `askd serve` running?" in line
    r = await askd("--debug", "cancel", "s1", "--admin-url", "http://127.0.0.1:1")
    assert r.exit_code == 1 and "Traceback" in r.stderr
    r = await askd("cancel", "s1", "--admin-url", "http://127.0.0.1:1", env={"ASKD_DEBUG": "1"})
    assert r.exit_code == 1 and "Traceback" in r.stderr


async def test_a_bad_config_is_a_usage_error(local: RunningDaemon, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ASKD_AUTH__SECRET", "short")
    line = one_error_line(await askd("pending", "list"), 2)
    assert "ASKD_AUTH__SECRET" in line


async def test_token_issue_gives_user_tokens_an_expiry_by_default(local: RunningDaemon) -> None:
    def claims(out: str) -> dict:
        return jwt.decode(out.strip(), options={"verify_signature": False})

    now = time.time()
    user = claims((await askd("token", "issue", "--role", "user", "--sub", "alice")).stdout)
    assert abs(user["iat"] - now) < 60 and abs(user["exp"] - (now + 30 * 86400)) < 60
    assert "exp" not in claims((await askd("token", "issue", "--role", "user", "--sub", "alice", "--ttl", "0")).stdout)
    assert "exp" not in claims((await askd("token", "issue", "--role", "agent")).stdout)
    r = await askd("token", "issue", "--role", "user", "--sub", "al\tice")
    assert isinstance(r.exception, CliError) and r.exception.code == 2 and "control characters" in str(r.exception)


async def test_token_revoke_all_refuses_every_older_token(local: RunningDaemon) -> None:
    old = (await askd("token", "issue", "--role", "agent")).stdout.strip()
    r = await askd("token", "revoke-all")
    assert r.exit_code == 0 and "refused from now on" in r.stdout, r.stderr
    url = f"{local.url}/v1/sessions/s1/questions/r"
    assert (await local.http.get(url, headers={"Authorization": f"Bearer {old}"})).status_code == 401
    new = (await askd("token", "issue", "--role", "agent")).stdout.strip()
    assert (await local.http.get(url, headers={"Authorization": f"Bearer {new}"})).status_code == 404


async def test_token_issue_mints_with_the_daemons_secret(local: RunningDaemon) -> None:
    r = await askd("token", "issue", "--role", "user", "--sub", "alice", "--ttl", "60")
    assert r.exit_code == 0
    r2 = await local.http.get(f"{local.url}/v1/sessions/s1/questions", headers={"Authorization": f"Bearer {r.stdout.strip()}"})
    assert r2.status_code == 403  # a valid token, of role user
    admin = (await askd("token", "issue", "--role", "admin")).stdout.strip()
    r3 = await local.http.get(f"{local.admin_url}/admin/v1/stats", headers={"Authorization": f"Bearer {admin}"})
    assert r3.status_code == 200


def test_every_error_line_has_one_askd_prefix() -> None:
    # The command wrapper prints "askd: " before each: the message must not say it again.
    from askd.cli.clients import describe_error
    from askd.client import QuestionLost
    from askd.client.errors import AuthError, DaemonUnavailable

    for err in (
        DaemonUnavailable("http://127.0.0.1:8765", "HTTP 500"),
        DaemonUnavailable("http://127.0.0.1:8765", "connection refused"),
        AuthError(401, "unauthorized", "invalid token: it is not a valid askd token; it was cut or mistyped"),
        AuthError(403, "forbidden", "this API needs a token of role admin, not agent"),
        QuestionLost("s1", "r1"),
    ):
        message, _ = describe_error(err)
        assert not message.lower().startswith("askd"), message


# ---- time and refusal -----------------------------------------------------


async def test_ask_on_timeout_prints_the_default_and_exits_0(local: RunningDaemon) -> None:
    args = ["ask", "--user", "alice", "--session", "s1", "--question", "Deploy now?", "--option", "Yes", "--option", "No"]
    r = await askd(*args, "--timeout", "0.3", "--on-timeout", "Deploy now?=No")
    assert (r.exit_code, r.stdout) == (0, "No\n"), r.stderr
    assert "took the --on-timeout default" in r.stderr
    r = await askd(*args, "--timeout", "0.3", "--on-timeout", "Deploy now?=No", "--json")
    body = json.loads(r.stdout)
    assert (r.exit_code, body["status"], body["answers"], body["defaulted"]) == (0, "timeout", {"Deploy now?": "No"}, True)
    r = await askd(*args, "--on-timeout", "Other?=No")
    assert r.exit_code == 2 and "--on-timeout 'Other?=No' names no question" in r.stderr


async def test_ask_declined_exits_5_and_askd_decline(local: RunningDaemon) -> None:
    task = asyncio.create_task(askd("ask", "--user", "alice", "--session", "s1", "--question", "Deploy?"))
    [item] = await pending_on_daemon(local)
    # One CLI run at a time in this process: the admin API declines meanwhile.
    path = f"/admin/v1/sessions/s1/questions/{item['requestId']}/decline"
    assert (await local.admin("POST", path, json={"reason": "not mine"})).json() == {"accepted": True}
    r = await asyncio.wait_for(task, 10)
    assert (r.exit_code, r.stdout) == (5, "")
    assert "askd: an admin declined to answer: not mine" in r.stderr

    rid = (await askd("ask", "--user", "alice", "--session", "s2", "--question", "Deploy?", "--no-wait")).stdout.strip()
    r = await askd("decline", "s2", rid, "--reason", "not mine")
    assert (r.exit_code, r.stdout) == (0, f"Declined {rid} in session s2.\n"), r.stderr
    result = (await local.result("s2", rid)).json()
    assert (result["status"], result["reason"], result["via"]) == ("declined", "not mine", "admin")
    r = await askd("decline", "s2", rid)
    assert r.exit_code == 1 and "not pending" in r.stderr, r.stderr


async def test_ask_max_extension_and_askd_extend(local: RunningDaemon) -> None:
    r = await askd("ask", "--user", "alice", "--session", "s1", "--question", "Deploy?", "--max-extension", "60", "--no-wait")
    rid = r.stdout.strip()
    tab = await local.connect("alice")
    await tab.subscribe("s1")
    await tab.send({"type": "extend", "sessionId": "s1", "requestId": rid, "seconds": 90, "id": "x"})
    assert (await tab.recv())["payload"]["extended"] is True  # 60 of the 90 asked
    before = (await local.result("s1", rid)).json()["expiresAt"]
    r = await askd("extend", "s1", rid, "30", "--json")
    body = json.loads(r.stdout)
    assert r.exit_code == 0 and body["status"] == "pending" and body["expiresAt"] > before
    r = await askd("extend", "s1", rid, "86400")
    assert r.exit_code == 1 and "may live at most max_timeout_seconds" in r.stderr, r.stderr
