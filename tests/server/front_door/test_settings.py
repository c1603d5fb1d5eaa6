"""The front door's settings (spec section 13) from the environment and TOML
(their errors are in tests/config/test_config.py); ``public_url`` in ``askd.json``,
in the Origin check and in ``askd open``'s link."""

from __future__ import annotations

import ipaddress
import json
from pathlib import Path

import pytest
import websockets

from askd import state
from askd.client import Discovery
from askd.config import load_settings
from tests.cli.conftest import _daemon_logs_apart  # noqa: F401  (autouse: the CLI's stdout stays its own)
from tests.cli.test_commands import askd
from tests.conftest import SECRET, RunningDaemon

PUBLIC = "https://tools.example.com/askd/"


def test_from_the_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("ASKD_PUBLIC_URL", PUBLIC)
    monkeypatch.setenv("ASKD_TRUSTED_PROXIES", '["10.0.0.0/8", "127.0.0.1", "::1", "192.168.1.7/24"]')
    monkeypatch.setenv("ASKD_TLS__CERT_FILE", str(tmp_path / "cert.pem"))
    monkeypatch.setenv("ASKD_TLS__KEY_FILE", str(tmp_path / "key.pem"))
    s = load_settings()
    assert str(s.public_url) == PUBLIC and s.public_base() == PUBLIC.rstrip("/")
    assert s.trusted_proxies == [ipaddress.ip_network(n) for n in ("10.0.0.0/8", "127.0.0.1/32", "::1/128", "192.168.1.0/24")]
    assert (s.tls.cert_file, s.tls.key_file, s.tls.enabled) == (tmp_path / "cert.pem", tmp_path / "key.pem", True)


def test_from_toml_and_the_defaults(tmp_path: Path) -> None:
    defaults = load_settings()
    assert (defaults.public_url, defaults.trusted_proxies, defaults.tls.enabled) == (None, [], False)
    path = tmp_path / "askd.toml"
    path.write_text(f'public_url = "{PUBLIC}"\ntrusted_proxies = ["127.0.0.1"]\n[tls]\ncert_file = "/c.pem"\nkey_file = "/k.pem"\n')
    s = load_settings(path)
    assert s.public_base() == "https://tools.example.com/askd"
    assert s.trusted_proxies == [ipaddress.ip_network("127.0.0.1")]
    assert s.tls.cert_file == Path("/c.pem")


@pytest.mark.parametrize("settings_overrides", [{"public_url": PUBLIC}])
async def test_the_public_origin_may_open_the_websocket(daemon: RunningDaemon, tmp_path: Path) -> None:
    info = state.read_runtime(tmp_path / "state")
    assert info is not None and info["public_url"] == PUBLIC and info["scheme"] == "http"
    for origin in ("https://tools.example.com", "https://TOOLS.example.com", f"http://127.0.0.1:{daemon.daemon.port}"):
        tab = await daemon.connect("alice", origin=origin)
        await tab.works()
    for origin in ("http://tools.example.com", "https://tools.example.com:8443", "https://evil.example", "null"):
        with pytest.raises(websockets.InvalidStatus) as refused:
            await daemon.connect("alice", origin=origin)
        assert refused.value.response.status_code == 403
        assert json.loads(refused.value.response.body)["error"]["code"] == "forbidden"


def test_the_inbox_link_starts_with_the_public_url(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    state_dir = tmp_path / "state"
    monkeypatch.setenv("ASKD_URL", "http://127.0.0.1:9999")  # the agents' way in, not the people's
    state.write_runtime(state_dir, {"port": 8765, "admin_port": 8766, "pid": 0, "public_url": "https://running.example/askd/"})
    assert Discovery().page_url() == "https://running.example/askd"  # the running daemon's
    monkeypatch.setenv("ASKD_PUBLIC_URL", PUBLIC)
    assert Discovery().page_url() == "https://tools.example.com/askd"  # this command's configuration
    assert Discovery().page_url("https://other.example/x/") == "https://other.example/x"  # --url
    monkeypatch.delenv("ASKD_PUBLIC_URL")
    state.write_runtime(state_dir, {"port": 8765, "admin_port": 8766, "pid": 0})
    assert Discovery().page_url() == "http://127.0.0.1:9999"  # no public_url anywhere: as before


@pytest.mark.parametrize("settings_overrides", [{"public_url": "http://127.0.0.1:1/askd/"}])
async def test_askd_open_prints_the_running_daemons_public_url(daemon: RunningDaemon, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ASKD_AUTH__SECRET", SECRET)
    r = await askd("open", "--user", "alice", "--no-browser")
    assert r.exit_code == 0
    assert r.stdout.startswith("http://127.0.0.1:1/askd/#code=")
    assert "nothing answers at http://127.0.0.1:1/askd" in r.stderr  # it says so, and still prints the link
