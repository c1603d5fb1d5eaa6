"""Configuration (spec section 8): defaults, ``ASKD_`` environment with ``__``
nesting, the TOML file, their priority, and one-line errors naming the
setting."""

from __future__ import annotations

from pathlib import Path

import platformdirs
import pytest

from askd.config import ConfigError, load_settings

SECRET = "s" * 40


@pytest.fixture
def toml(tmp_path: Path):
    def write(text: str) -> Path:
        path = tmp_path / "askd.toml"
        path.write_text(text)
        return path

    return write


def test_defaults(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ASKD_STATE_DIR")
    s = load_settings()
    assert (s.host, s.port, s.admin_host, s.admin_port) == ("127.0.0.1", 8765, "127.0.0.1", 8766)
    assert (s.question_timeout_seconds, s.max_timeout_seconds, s.result_ttl_seconds) == (900, 86400, 600)
    assert s.auth.secret is None
    assert s.state_dir == Path(platformdirs.user_state_dir("askd"))
    assert s.allowed_origins == []
    assert s.limits.max_message_bytes == 65536
    assert s.limits.max_questions == 20
    assert s.log.level == "info" and s.log.format is None
    assert s.log.resolved_format() == "json"  # pytest's stderr is not a terminal


def test_environment_with_prefix_and_nesting(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    env = {
        "ASKD_HOST": "0.0.0.0",
        "ASKD_PORT": "9000",
        "ASKD_ADMIN_PORT": "9001",
        "ASKD_QUESTION_TIMEOUT_SECONDS": "0.25",
        "ASKD_MAX_TIMEOUT_SECONDS": "60",
        "ASKD_RESULT_TTL_SECONDS": "5",
        "ASKD_STATE_DIR": str(tmp_path / "elsewhere"),
        "ASKD_ALLOWED_ORIGINS": '["https://a.example", "https://b.example"]',
        "ASKD_AUTH__SECRET": SECRET,
        "ASKD_LIMITS__MAX_MESSAGE_BYTES": "1024",
        "ASKD_LOG__FORMAT": "console",
        "ASKD_LOG__LEVEL": "DEBUG",
    }
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    s = load_settings()
    assert (s.host, s.port, s.admin_port) == ("0.0.0.0", 9000, 9001)
    assert (s.question_timeout_seconds, s.max_timeout_seconds, s.result_ttl_seconds) == (0.25, 60, 5)
    assert s.state_dir == tmp_path / "elsewhere"
    assert s.allowed_origins == ["https://a.example", "https://b.example"]
    assert s.auth.secret is not None and s.auth.secret.get_secret_value() == SECRET
    assert s.limits.max_message_bytes == 1024
    assert s.limits.max_questions == 20  # a nested env var leaves its siblings alone
    assert (s.log.format, s.log.level) == ("console", "debug")


TOML = """
port = 7000
question_timeout_seconds = 1.5
allowed_origins = ["https://toml.example"]

[limits]
max_message_bytes = 2048
max_questions = 5

[log]
level = "warning"
"""


def test_toml_file_via_argument(toml) -> None:
    s = load_settings(toml(TOML))
    assert (s.port, s.question_timeout_seconds, s.allowed_origins) == (7000, 1.5, ["https://toml.example"])
    assert (s.limits.max_message_bytes, s.limits.max_questions, s.log.level) == (2048, 5, "warning")
    assert s.admin_port == 8766  # what the file does not name keeps its default


def test_toml_file_via_askd_config(monkeypatch: pytest.MonkeyPatch, toml) -> None:
    monkeypatch.setenv("ASKD_CONFIG", str(toml(TOML)))
    assert load_settings().port == 7000


def test_priority_flags_then_env_then_toml_then_defaults(monkeypatch: pytest.MonkeyPatch, toml) -> None:
    path = toml(TOML)
    monkeypatch.setenv("ASKD_PORT", "7100")
    monkeypatch.setenv("ASKD_LIMITS__MAX_QUESTIONS", "7")
    s = load_settings(path, port=7200, log__level="error", admin_port=None)
    assert s.port == 7200  # flag over env over TOML
    assert s.log.level == "error"  # flag over TOML
    assert s.admin_port == 8766  # a flag left as None is not given
    assert s.limits.max_questions == 7  # env over TOML, nested
    assert s.limits.max_message_bytes == 2048  # ... without hiding TOML's sibling
    assert s.question_timeout_seconds == 1.5  # TOML over default

    s = load_settings(path)
    assert s.port == 7100
    monkeypatch.delenv("ASKD_PORT")
    assert load_settings(path).port == 7000
    assert load_settings().port == 8765


@pytest.mark.parametrize(
    ("env", "names"),
    [
        ({"ASKD_PORT": "99999"}, ("port", "ASKD_PORT")),
        ({"ASKD_PORT": "eighty"}, ("port", "ASKD_PORT")),
        ({"ASKD_ADMIN_PORT": "-1"}, ("admin_port", "ASKD_ADMIN_PORT")),
        ({"ASKD_QUESTION_TIMEOUT_SECONDS": "0"}, ("question_timeout_seconds",)),
        ({"ASKD_RESULT_TTL_SECONDS": "-1"}, ("result_ttl_seconds",)),
        ({"ASKD_QUESTION_TIMEOUT_SECONDS": "100", "ASKD_MAX_TIMEOUT_SECONDS": "10"}, ("max_timeout_seconds",)),
        ({"ASKD_LIMITS__MAX_MESSAGE_BYTES": "abc"}, ("limits.max_message_bytes", "ASKD_LIMITS__MAX_MESSAGE_BYTES")),
        ({"ASKD_LIMITS__MAX_QUESTIONS": "0"}, ("limits.max_questions",)),
        ({"ASKD_AUTH__SECRET": "short"}, ("auth.secret", "ASKD_AUTH__SECRET")),
        ({"ASKD_LOG__FORMAT": "xml"}, ("log.format",)),
        ({"ASKD_LOG__LEVEL": "loud"}, ("log.level",)),
        ({"ASKD_ALLOWED_ORIGINS": '{"a": 1}'}, ("allowed_origins", "ASKD_ALLOWED_ORIGINS", "comma-separated")),
        ({"ASKD_ALLOWED_ORIGINS": '["https://a.example",'}, ("ASKD_ALLOWED_ORIGINS", "line 1 column", "comma-separated")),
        ({"ASKD_LIMITS": "{max_questions: 3}"}, ("limits", "ASKD_LIMITS", "JSON object")),
        ({"ASKD_TRUSTED_PROXIES": '["proxy.internal"]'}, ("trusted_proxies", "ASKD_TRUSTED_PROXIES", "proxy.internal")),
        ({"ASKD_TRUSTED_PROXIES": "127.0.0.1,proxy.internal"}, ("trusted_proxies", "proxy.internal")),
        ({"ASKD_PUBLIC_URL": "tools.example.com/askd"}, ("public_url", "ASKD_PUBLIC_URL")),
        ({"ASKD_PUBLIC_URL": "ftp://tools.example.com/"}, ("public_url",)),
        ({"ASKD_PUBLIC_URL": "https://tools.example.com/askd/?x=1"}, ("public_url", "no query")),
        ({"ASKD_TLS__CERT_FILE": "/c.pem"}, ("tls.key_file", "ASKD_TLS__KEY_FILE", "set both or neither")),
        ({"ASKD_TLS__KEY_FILE": "/k.pem"}, ("tls.key_file", "ASKD_TLS__CERT_FILE", "set both or neither")),
    ],
)
def test_invalid_environment_names_the_setting(monkeypatch: pytest.MonkeyPatch, env: dict, names: tuple) -> None:
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    with pytest.raises(ConfigError) as err:
        load_settings()
    message = str(err.value)
    assert "\n" not in message
    for name in names:
        assert name in message
    assert "short" not in message  # never echo a secret


@pytest.mark.parametrize(
    ("name", "meant"),
    [
        ("ASKD_QUESTION_TIMEOUT_SECOND", "ASKD_QUESTION_TIMEOUT_SECONDS"),
        ("ASKD_QUESTION_TIMEOUT", "ASKD_QUESTION_TIMEOUT_SECONDS"),
        ("ASKD_PUBLICURL", "ASKD_PUBLIC_URL"),
        ("ASKD_WEBHOOK_SECRET", "ASKD_NOTIFY__WEBHOOK_SECRET"),
        ("ASKD_NOTIFY__WEBHOOK_URLL", "ASKD_NOTIFY__WEBHOOK_URL"),
        ("ASKD_NOTIFY__SURPRISE", None),
        ("ASKD_CA_FIL", "ASKD_CA_FILE"),  # askd's own variables that are not settings count too
        ("askd_portt", "ASKD_PORT"),  # pydantic-settings reads names without case
    ],
)
def test_unknown_variable_is_refused_with_a_guess(monkeypatch: pytest.MonkeyPatch, name: str, meant: str | None) -> None:
    monkeypatch.setenv(name, "60")
    with pytest.raises(ConfigError) as err:
        load_settings()
    message = str(err.value)
    assert message.startswith(f"unknown variable {name}: askd has no such setting")
    assert "\n" not in message
    if meant is None:
        assert "did you mean" not in message
    else:
        assert message.endswith(f"; did you mean {meant}?")


def test_every_field_of_the_model_is_a_known_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    # Read from the model, so a field added tomorrow needs no list updated here.
    from askd.config.environment import setting_variables
    from askd.config.settings import Settings

    names = setting_variables(Settings)
    assert {"ASKD_PORT", "ASKD_LIMITS__MAX_QUESTIONS", "ASKD_NOTIFY__WEBHOOK_URL", "ASKD_LIMITS"} <= set(names)
    monkeypatch.setenv("ASKD_LIMITS__MAX_QUESTIONS", "3")
    for name in ("ASKD_URL", "ASKD_ADMIN_URL", "ASKD_AGENT_TOKEN", "ASKD_ADMIN_TOKEN", "ASKD_CA_FILE", "ASKD_DEBUG"):
        monkeypatch.setenv(name, "x")
    assert load_settings().limits.max_questions == 3


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("127.0.0.1", ["127.0.0.1/32"]),
        ("127.0.0.1, 10.0.0.0/8", ["127.0.0.1/32", "10.0.0.0/8"]),
        ('["127.0.0.1", "10.1.2.3/8"]', ["127.0.0.1/32", "10.0.0.0/8"]),
        ("", []),
    ],
)
def test_list_settings_from_the_environment_are_json_or_comma_separated(
    monkeypatch: pytest.MonkeyPatch, value: str, expected: list[str]
) -> None:
    monkeypatch.setenv("ASKD_TRUSTED_PROXIES", value)
    monkeypatch.setenv("ASKD_ALLOWED_ORIGINS", "https://a.example,https://b.example")
    s = load_settings()
    assert [str(n) for n in s.trusted_proxies] == expected
    assert s.allowed_origins == ["https://a.example", "https://b.example"]


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("port = 99999", "port"),
        ('port = "x"', "port"),
        ("[limits]\nmax_message_bytes = 1", "limits.max_message_bytes"),
        ("portt = 1", "portt"),  # an unknown key is a typo, not silence
        ("[limits]\nmax_mesage_bytes = 1", "max_mesage_bytes"),
        ("port = [", "TOML"),
        ("port = 1\nport = 2", "TOML"),
    ],
)
def test_invalid_toml_names_the_setting(toml, text: str, name: str) -> None:
    with pytest.raises(ConfigError) as err:
        load_settings(toml(text))
    message = str(err.value)
    assert "\n" not in message
    assert name in message
    assert "askd.toml" in message  # which file to fix
    assert "ASKD_" not in message  # not a variable nobody set


def test_toml_errors_name_the_file_and_key(toml) -> None:
    path = toml("[limits]\nmax_message_bytes = 1\n")
    with pytest.raises(ConfigError, match=rf"^invalid setting limits.max_message_bytes in {path}: "):
        load_settings(path)
    with pytest.raises(ConfigError, match=rf"^unknown key limits.max_mesage_bytes in {path}: .*did you mean limits.max_message_bytes\?$"):
        load_settings(toml("[limits]\nmax_mesage_bytes = 1\n"))


def test_a_bad_value_from_the_environment_names_the_variable_not_the_file(monkeypatch: pytest.MonkeyPatch, toml) -> None:
    monkeypatch.setenv("ASKD_LIMITS__MAX_MESSAGE_BYTES", "1")
    with pytest.raises(ConfigError, match=r"^invalid setting limits.max_message_bytes \(ASKD_LIMITS__MAX_MESSAGE_BYTES\): "):
        load_settings(toml("[limits]\nmax_message_bytes = 2048\n"))


def test_missing_config_file_is_an_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ConfigError, match="does not exist"):
        load_settings(tmp_path / "nope.toml")
    monkeypatch.setenv("ASKD_CONFIG", str(tmp_path / "nope.toml"))
    with pytest.raises(ConfigError, match="nope.toml"):
        load_settings()


def test_invalid_flag_names_the_setting() -> None:
    with pytest.raises(ConfigError, match=r"question_timeout_seconds"):
        load_settings(question_timeout_seconds=-1)
