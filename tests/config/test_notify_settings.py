"""The ``notify`` settings and ``public_url`` (spec E): names, defaults,
the environment and TOML, and one-line errors that never echo a secret."""

from __future__ import annotations

from pathlib import Path

import pytest

from askd.config import ConfigError, load_settings
from askd.channels.mail.smtp import smtp_target
from askd.server.app import Daemon
from askd.server.from_settings import notify_policy
from askd.server.front_door.proxy import public_base


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


def test_teams_is_a_format(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ASKD_NOTIFY__FORMAT", "teams")
    assert load_settings().notify.format == "teams"


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
        ({"ASKD_NOTIFY__FORMAT": "discord"}, "notify.format (ASKD_NOTIFY__FORMAT)"),
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
        assert d.notifier is None and d.hub.webhooks.sink is None
        assert d.hub.registry.notify_policy is None
        assert d.mailer is None
    finally:
        await d.stop()


# ---- e-mail (spec J) ------------------------------------------------------


def test_mail_settings_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ASKD_NOTIFY__SMTP_URL", "smtp://mailer%40corp:p%40ss%3Aword@mail.example.com:587")
    monkeypatch.setenv("ASKD_NOTIFY__EMAIL_FROM", "askd <askd@example.com>")
    s = load_settings()
    n = s.notify
    assert n.email_from is not None and (n.email_from.name, n.email_from.email) == ("askd", "askd@example.com")
    assert n.smtp_url is not None
    target = smtp_target(n.smtp_url.get_secret_value())
    assert (target.scheme, target.host, target.port) == ("smtp", "mail.example.com", 587)
    assert (target.username, target.password) == ("mailer@corp", "p@ss:word")
    assert target.shown == "smtp://mail.example.com:587"
    assert "p%40ss" not in repr(s) and "p@ss" not in repr(target)
    policy = notify_policy(s)  # mail alone makes questions due
    assert policy is not None and (policy.after, policy.only_offline) == (0, False)


@pytest.mark.parametrize(
    ("url", "port"), [("smtp://127.0.0.1", 25), ("smtps://mail.example.com", 465), ("smtp://[::1]:2525/", 2525)]
)
def test_smtp_url_ports(url: str, port: int) -> None:
    target = smtp_target(url)
    assert target.port == port and target.scheme == url.split(":")[0]
    assert (target.username, target.password) == (None, None)


@pytest.mark.parametrize(
    ("url", "opted", "start_tls"),
    [
        ("smtps://u:pw@mail.example.com", False, False),  # TLS from the first byte: no STARTTLS
        ("smtp://u:pw@mail.example.com", False, True),  # a password: STARTTLS required
        ("smtp://u:pw@mail.example.com", True, None),  # opted out: when offered
        ("smtp://mail.example.com", False, None),  # nothing secret: when offered
    ],
)
def test_the_tls_rule_of_each_url_form(monkeypatch: pytest.MonkeyPatch, url: str, opted: bool, start_tls: bool | None) -> None:
    monkeypatch.setenv("ASKD_NOTIFY__SMTP_URL", url)
    monkeypatch.setenv("ASKD_NOTIFY__EMAIL_FROM", "askd@example.com")
    if opted:
        monkeypatch.setenv("ASKD_NOTIFY__SMTP_LOGIN_WITHOUT_TLS", "true")
    target = load_settings().notify.mail_server()
    assert target is not None and target.login_without_tls is opted and target.start_tls is start_tls


@pytest.mark.parametrize(
    ("value", "says"),
    [
        ("http://mail.example.com", "must start with smtp:// or smtps://"),
        ("mail.example.com:25", "must start with smtp:// or smtps://"),
        ("smtp://", "names no host"),
        ("smtp://mail.example.com:99999", "not a number from 1 to 65535"),
        ("smtp://u:hunter2-secret@mail.example.com/path", "no path or query"),
        ("smtp://:hunter2-secret@mail.example.com", "a password but no user name"),
    ],
)
def test_a_bad_smtp_url_is_one_line_without_the_password(monkeypatch: pytest.MonkeyPatch, value: str, says: str) -> None:
    monkeypatch.setenv("ASKD_NOTIFY__SMTP_URL", value)
    monkeypatch.setenv("ASKD_NOTIFY__EMAIL_FROM", "askd@example.com")
    with pytest.raises(ConfigError) as err:
        load_settings()
    message = str(err.value)
    assert message.startswith("invalid setting notify.smtp_url (ASKD_NOTIFY__SMTP_URL): ") and says in message
    assert "hunter2" not in message and "\n" not in message


def test_smtp_url_needs_email_from_and_email_from_must_be_an_address(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ASKD_NOTIFY__SMTP_URL", "smtp://127.0.0.1:2525")
    with pytest.raises(ConfigError, match=r"^invalid setting notify.email_from \(ASKD_NOTIFY__EMAIL_FROM\): .*is not set but notify.smtp_url"):
        load_settings()
    monkeypatch.setenv("ASKD_NOTIFY__EMAIL_FROM", "not an address")
    with pytest.raises(ConfigError, match=r"^invalid setting notify.email_from \(ASKD_NOTIFY__EMAIL_FROM\): "):
        load_settings()


def test_mail_settings_from_toml_and_an_unknown_key(tmp_path: Path) -> None:
    path = tmp_path / "askd.toml"
    path.write_text('[notify]\nsmtp_url = "smtps://mail.example.com"\nemail_from = "askd@example.com"\n')
    assert load_settings(path).notify.email_from is not None
    path.write_text('[notify]\nsmtp_url = "smtps://mail.example.com"\nemail_form = "askd@example.com"\n')
    with pytest.raises(ConfigError, match=r"^unknown key notify.email_form in .*did you mean"):
        load_settings(path)


@pytest.mark.parametrize(
    ("value", "name", "address"),
    [
        ("askd <askd@corp.local>", "askd", "askd@corp.local"),  # an Active Directory domain
        ("askd@mail.lan", "askd", "askd@mail.lan"),
        ('"Ask D" <ask.d@example.test>', "Ask D", "ask.d@example.test"),  # the reserved test TLD
        ("root@mailhost", "root", "root@mailhost"),  # one label, as an intranet relay knows it
        ("Askd@MAIL.Corp.LOCAL", "Askd", "Askd@mail.corp.local"),  # the domain lower-cased, the local part kept
    ],
)
def test_email_from_on_an_intranet_domain(monkeypatch: pytest.MonkeyPatch, value: str, name: str, address: str) -> None:
    # askd never resolves a domain: its relay (smtp_url) does.
    monkeypatch.setenv("ASKD_NOTIFY__SMTP_URL", "smtp://mail.corp.local:25")
    monkeypatch.setenv("ASKD_NOTIFY__EMAIL_FROM", value)
    sender = load_settings().notify.email_from
    assert sender is not None and (sender.name, sender.email) == (name, address)


@pytest.mark.parametrize(
    "value", ["askd@corp..local", "askd@@corp.local", "askd@corp.local.", "askd@-corp.local", "as kd@corp.local", "askd <askd@corp.local"]
)
def test_a_malformed_email_from_is_refused(monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    monkeypatch.setenv("ASKD_NOTIFY__EMAIL_FROM", value)
    with pytest.raises(ConfigError, match=r"^invalid setting notify.email_from \(ASKD_NOTIFY__EMAIL_FROM\): .*not a valid email address"):
        load_settings()


def test_slack_app_settings_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ASKD_NOTIFY__SLACK_BOT_TOKEN", "xoxb-1-2-s3cr3tvalue")
    monkeypatch.setenv("ASKD_NOTIFY__SLACK_CHANNEL", "C0123456789")
    s = load_settings()
    n = s.notify
    assert n.slack_bot_token is not None and n.slack_bot_token.get_secret_value() == "xoxb-1-2-s3cr3tvalue"
    assert n.slack_channel == "C0123456789" and str(n.slack_api_url) == "https://slack.com/api/"
    assert "s3cr3t" not in repr(s)
    assert notify_policy(s) is not None  # a Slack app alone makes questions due


@pytest.mark.parametrize(
    ("env", "says"),
    [
        ({"ASKD_NOTIFY__SLACK_CHANNEL": "C0123456789"}, "notify.slack_channel"),  # no token
        ({"ASKD_NOTIFY__SLACK_BOT_TOKEN": ""}, "notify.slack_bot_token"),
        ({"ASKD_NOTIFY__SLACK_BOT_TOKEN": "xoxb-1 s3cr3t"}, "notify.slack_bot_token"),
        ({"ASKD_NOTIFY__SLACK_BOT_TOKEN": "xoxb-1", "ASKD_NOTIFY__SLACK_CHANNEL": "# general"}, "notify.slack_channel"),
        ({"ASKD_NOTIFY__SLACK_BOT_TOKEN": "xoxb-1", "ASKD_NOTIFY__SLACK_API_URL": "ftp://slack.example"}, "notify.slack_api_url"),
    ],
)
def test_bad_slack_settings_are_one_line_without_the_token(monkeypatch: pytest.MonkeyPatch, env: dict[str, str], says: str) -> None:
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    with pytest.raises(ConfigError) as err:
        load_settings()
    assert says in str(err.value) and "s3cr3t" not in str(err.value)
