"""The ``notify`` settings and ``public_url`` (spec E): names, defaults,
the environment and TOML, and one-line errors that never echo a secret."""

from __future__ import annotations

from pathlib import Path

import pytest

from askd.config import ConfigError, load_settings
from askd.server.app import Daemon, notify_policy, public_base


def test_defaults_are_off() -> None:
    s = load_settings()
    n = s.notify
    assert (n.webhook_url, n.format, n.webhook_secret, n.after_seconds, n.only_offline) == (None, "json", None, 0, False)
    assert s.public_url is None
    assert notify_policy(s) is None  # no webhook: the core schedules nothing


def test_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in {
        "ASKD_NOTIFY__WEBHOOK_URL": "https://hooks.example.com/T0/B0/xyz",
        "ASKD_NOTIFY__FORMAT": "slack",
        "ASKD_NOTIFY__WEBHOOK_SECRET": "shh-it-is-a-secret",
        "ASKD_NOTIFY__AFTER_SECONDS": "120",
        "ASKD_NOTIFY__ONLY_OFFLINE": "true",
        "ASKD_PUBLIC_URL": "https://tools.example.com/askd/",
    }.items():
        monkeypatch.setenv(name, value)
    s = load_settings()
    assert str(s.notify.webhook_url) == "https://hooks.example.com/T0/B0/xyz"
    assert s.notify.format == "slack" and s.notify.after_seconds == 120 and s.notify.only_offline
    assert s.notify.webhook_secret is not None and s.notify.webhook_secret.get_secret_value() == "shh-it-is-a-secret"
    assert "shh" not in repr(s)
    policy = notify_policy(s)
    assert policy is not None and (policy.after, policy.only_offline) == (120, True)
    assert public_base(s, "http", 8765) == "https://tools.example.com/askd/"


def test_from_toml(tmp_path: Path) -> None:
    path = tmp_path / "askd.toml"
    path.write_text('public_url = "http://askd.lan:8765"\n[notify]\nwebhook_url = "http://127.0.0.1:9000/hook"\n')
    s = load_settings(path)
    assert str(s.notify.webhook_url) == "http://127.0.0.1:9000/hook"
    assert str(s.public_url) == "http://askd.lan:8765/"


@pytest.mark.parametrize(
    ("host", "expected"),
    [("127.0.0.1", "http://127.0.0.1:8765/"), ("0.0.0.0", "http://127.0.0.1:8765/"), ("::", "http://[::1]:8765/")],
)
def test_links_default_to_the_public_listener(host: str, expected: str) -> None:
    assert public_base(load_settings(host=host), "http", 8765) == expected


@pytest.mark.parametrize(
    ("env", "setting"),
    [
        ({"ASKD_NOTIFY__WEBHOOK_URL": "ftp://example.com/x"}, "notify.webhook_url (ASKD_NOTIFY__WEBHOOK_URL)"),
        ({"ASKD_NOTIFY__WEBHOOK_URL": "not a url"}, "notify.webhook_url (ASKD_NOTIFY__WEBHOOK_URL)"),
        ({"ASKD_NOTIFY__FORMAT": "teams"}, "notify.format (ASKD_NOTIFY__FORMAT)"),
        ({"ASKD_NOTIFY__AFTER_SECONDS": "-1"}, "notify.after_seconds (ASKD_NOTIFY__AFTER_SECONDS)"),
        ({"ASKD_NOTIFY__TIMEOUT_SECONDS": "0"}, "notify.timeout_seconds (ASKD_NOTIFY__TIMEOUT_SECONDS)"),
        ({"ASKD_NOTIFY__WEBHOOK_SECRET": ""}, "notify.webhook_secret (ASKD_NOTIFY__WEBHOOK_SECRET)"),
        ({"ASKD_PUBLIC_URL": "askd.example.com"}, "public_url (ASKD_PUBLIC_URL)"),
    ],
)
def test_invalid_values_name_the_setting(monkeypatch: pytest.MonkeyPatch, env: dict[str, str], setting: str) -> None:
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    with pytest.raises(ConfigError, match="^invalid setting ") as err:
        load_settings()
    assert setting in str(err.value)


async def test_the_daemon_starts_no_sender_without_a_webhook(tmp_path: Path) -> None:
    d = Daemon(load_settings(port=0, admin_port=0, state_dir=tmp_path / "state", auth={"secret": "x" * 40}))
    await d.start()
    try:
        assert d.notifier is None and d.hub.on_notify is None
        assert d.hub.registry.notify_policy is None
    finally:
        await d.stop()
