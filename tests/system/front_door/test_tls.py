"""askd's own TLS (``tls.cert_file``, ``tls.key_file``) with a CA and a
certificate made by the test: HTTPS on both listeners, WSS, ``askd.json``
saying so, the clients and the CLI trusting the CA through ``ASKD_CA_FILE``
or ``--cacert`` (and failing at once without it), and start-up errors."""

from __future__ import annotations

import asyncio
import os
import subprocess
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.async_api import expect

from askd import state
from askd.client import AdminClient, AsyncAgentClient, QuestionEvent, UntrustedCertificate, UserClient
from askd.config import ConfigError, load_settings
from askd.server.app import Daemon
from tests.system.browser.conftest import OpenInbox, browser, inbox  # noqa: F401  (fixtures)
from tests.cli.conftest import _daemon_logs_apart  # noqa: F401  (autouse: the CLI's stdout stays its own)
from tests.cli.test_commands import askd, one_error_line
from tests.cli.test_subprocess import ASKD
from tests.conftest import SECRET, RunningDaemon, q
from tests.system.front_door.conftest import Certs


@pytest.fixture
def settings_overrides(certs: Certs) -> dict[str, Any]:
    return {"tls": {"cert_file": str(certs.cert), "key_file": str(certs.key)}}


@pytest.fixture
def client_ca(certs: Certs) -> Path:
    return certs.ca


@pytest.fixture
def local(daemon: RunningDaemon, monkeypatch: pytest.MonkeyPatch) -> RunningDaemon:
    """The daemon as the machine's own: clients find it through askd.json and mint tokens."""
    monkeypatch.setenv("ASKD_AUTH__SECRET", SECRET)
    return daemon


async def test_both_listeners_serve_https_and_askd_json_says_so(daemon: RunningDaemon, tmp_path: Path) -> None:
    info = state.read_runtime(tmp_path / "state")
    assert info is not None and info["scheme"] == "https"
    for base in (daemon.url, daemon.admin_url):
        assert base.startswith("https://")
        r = await daemon.http.get(f"{base}/healthz")
        assert r.status_code == 200 and r.json()["status"] == "ok"
        # Browsers that once reached askd over TLS never try plain HTTP again.
        assert r.headers["Strict-Transport-Security"] == "max-age=31536000"
    async with httpx.AsyncClient() as untrusting:  # the system's CAs only
        with pytest.raises(httpx.ConnectError, match="CERTIFICATE_VERIFY_FAILED"):
            await untrusting.get(f"{daemon.url}/healthz")
    async with httpx.AsyncClient() as plain:  # plain HTTP to a TLS port gets no answer
        with pytest.raises(httpx.HTTPError):
            await plain.get(f"http://127.0.0.1:{daemon.daemon.port}/healthz")


async def test_a_question_survives_a_drop_over_wss(daemon: RunningDaemon) -> None:
    tab = await daemon.connect("alice")
    assert daemon.ws_url.startswith("wss://")
    asked = await daemon.ask("s1", "alice", [q("Deploy?", "yes", "no")])
    await tab.expect("ask_user_questions")
    await daemon.admin("POST", "/admin/v1/disconnect", json={"userId": "alice", "mode": "abort"})
    await tab.closed()
    tab = await daemon.connect("alice")
    frames = await tab.subscribe("*")
    assert frames[-1]["payload"]["requestId"] == asked["requestId"]
    assert (await tab.answer("s1", asked["requestId"], {"Deploy?": "no"}))["payload"] == {"accepted": True}
    assert (await daemon.result("s1", asked["requestId"])).json()["answers"] == {"Deploy?": "no"}


async def test_the_clients_find_https_in_askd_json_and_trust_askd_ca_file(
    local: RunningDaemon, certs: Certs, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ASKD_CA_FILE", str(certs.ca))
    async with UserClient(user="alice") as user, AsyncAgentClient() as agent:
        assert user.url == f"wss://127.0.0.1:{local.daemon.port}/ws"
        assert agent.url == local.url
        await user.wait_connected(5)
        asking = asyncio.create_task(agent.ask("s1", "alice", [q("Deploy?", "yes", "no")]))
        event = await asyncio.wait_for(anext(aiter(user)), 5)
        assert isinstance(event, QuestionEvent)
        assert await user.answer(event, {"Deploy?": "yes"})
        result = await asyncio.wait_for(asking, 5)
    assert result.answers == {"Deploy?": "yes"}
    with AdminClient() as admin:  # blocking: in a thread, while the daemon serves in this loop
        assert admin.url == local.admin_url
        assert (await asyncio.to_thread(admin.stats))["answered"] == 1


async def test_a_certificate_nobody_vouched_for_fails_at_once(local: RunningDaemon) -> None:
    started = time.monotonic()
    async with AsyncAgentClient() as agent:
        with pytest.raises(UntrustedCertificate, match="ASKD_CA_FILE"):
            await agent.ask("s1", "alice", [q("Deploy?")])  # not retried for two minutes
    async with UserClient(user="alice") as user:
        with pytest.raises(UntrustedCertificate):
            await user.wait_connected(5)
    with AdminClient() as admin, pytest.raises(UntrustedCertificate):
        await asyncio.to_thread(admin.health)
    assert time.monotonic() - started < 5
    assert (await local.admin("GET", "/admin/v1/stats")).json()["asked"] == 0


async def test_the_cli_with_askd_ca_file_or_cacert(local: RunningDaemon, certs: Certs) -> None:
    ca = str(certs.ca)
    r = await askd("status", env={"ASKD_CA_FILE": ca})
    assert r.exit_code == 0 and "is up" in r.stdout, r.stderr
    r = await askd("--cacert", ca, "ask", "--user", "alice", "--session", "s1", "--question", "Deploy?", "--no-wait")
    assert r.exit_code == 0, r.stderr
    rid = r.stdout.strip()
    r = await askd("pending", "list", "--json", "--cacert", ca)
    assert r.exit_code == 0 and rid in r.stdout, r.stderr
    r = await askd("open", "--user", "alice", "--no-browser", "--cacert", ca)
    assert r.exit_code == 0 and r.stderr == "askd: the link logs in once, within 60 seconds; run `askd open` again for another\n"  # the health check passed over HTTPS: only the code's life
    assert r.stdout.startswith(f"https://127.0.0.1:{local.daemon.port}/#code=")

    line = one_error_line(await askd("pending", "list"))
    assert "not trusted" in line and "--cacert" in line
    line = one_error_line(await askd("--cacert", "/nonexistent/ca.pem", "status"), code=2)
    assert "/nonexistent/ca.pem" in line and "ASKD_CA_FILE" in line


async def test_the_inbox_page_over_https_uses_wss(local: RunningDaemon, inbox: OpenInbox, browser: Any) -> None:  # noqa: F811
    # Chromium cannot take the test CA here (the clients above check the
    # certificate); this checks that the page itself picks wss://.
    context = await browser.new_context(ignore_https_errors=True)
    tab = await inbox("alice", context=context)
    assert tab.page.url.startswith("https://")
    asked = await local.ask("s1", "alice", [q("Deploy?", "yes", "no")])
    await expect(tab.panel(asked["requestId"])).to_be_visible()


# ---- start-up errors ------------------------------------------------------


def test_a_pair_that_does_not_load_is_refused_at_start(certs: Certs, tmp_path: Path) -> None:
    bad_pem = tmp_path / "not.pem"
    bad_pem.write_text("not a certificate\n")
    other_key = certs.ca.with_name("ca.key")  # a real key, of another certificate
    cases = [
        ({"cert_file": str(tmp_path / "missing.pem"), "key_file": str(certs.key)}, "tls.cert_file"),
        ({"cert_file": str(certs.cert), "key_file": str(tmp_path / "missing.pem")}, "tls.key_file"),
        ({"cert_file": str(bad_pem), "key_file": str(certs.key)}, "cannot use"),
        ({"cert_file": str(certs.cert), "key_file": str(other_key)}, "cannot use"),
    ]
    for tls, expected in cases:
        settings = load_settings(port=0, admin_port=0, state_dir=tmp_path / "state", tls=tls)
        with pytest.raises(ConfigError, match=expected):
            Daemon(settings)


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        pytest.param({"ASKD_TLS__CERT_FILE": "CERT"}, "invalid setting tls.key_file (ASKD_TLS__KEY_FILE)", id="half-a-pair"),
        pytest.param({"ASKD_TLS__CERT_FILE": "CERT", "ASKD_TLS__KEY_FILE": "CA_KEY"}, "cannot use", id="mismatched"),
    ],
)
def test_askd_serve_stops_with_one_line_and_exit_2(certs: Certs, tmp_path: Path, env: dict[str, str], expected: str) -> None:
    paths = {"CERT": str(certs.cert), "CA_KEY": str(certs.ca.with_name("ca.key"))}
    run_env = {k: v for k, v in os.environ.items() if not k.startswith("ASKD_")}
    run_env.update({k: paths[v] for k, v in env.items()}, ASKD_STATE_DIR=str(tmp_path / "state"))
    r = subprocess.run([*ASKD, "serve", "--port", "0", "--admin-port", "0"], env=run_env, capture_output=True, text=True, timeout=30)
    assert r.returncode == 2, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("askd: ") and expected in lines[0], r.stderr
    assert not (tmp_path / "state" / "askd.json").exists()
