"""Kubernetes' service links in the environment (issue 29): a Service named
``askd`` puts ``ASKD_SERVICE_HOST``, ``ASKD_PORT=tcp://...`` and the like
into every pod. askd ignores them, by name and value together, and still
refuses a misspelt setting."""

from __future__ import annotations

from pathlib import Path

import pytest

from askd.config import ConfigError, load_settings
from askd.config.service_links import service_links
from tests.packaging.kubernetes.links import ASKD_SERVICE, NAMESPACE, service_env


def _setenv(monkeypatch: pytest.MonkeyPatch, env: dict[str, str]) -> None:
    for name, value in env.items():
        monkeypatch.setenv(name, value)


@pytest.mark.parametrize("env", [ASKD_SERVICE, NAMESPACE], ids=["askd", "namespace"])
def test_the_links_of_a_namespace_are_ignored(monkeypatch: pytest.MonkeyPatch, env: dict[str, str]) -> None:
    _setenv(monkeypatch, env)
    s = load_settings()
    assert (s.port, s.admin_port) == (8765, 8766)  # ASKD_PORT=tcp://... and ASKD_ADMIN_PORT=tcp://... set nothing


def test_every_shape_kubernetes_writes_is_recognised() -> None:
    env = {
        **NAMESPACE,
        # before Kubernetes bracketed IPv6 in its URLs
        "ASKD_OLD_SERVICE_HOST": "fd00::5",
        "ASKD_OLD_PORT": "tcp://fd00::5:8765",
        "ASKD_OLD_PORT_8765_TCP": "tcp://fd00::5:8765",
        "PATH": "/usr/bin",
        "ASKD_LOG__LEVEL": "debug",
    }
    assert service_links(env) == set(env) - {"PATH", "ASKD_LOG__LEVEL"}


def test_a_link_leaves_the_port_to_the_toml_file(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    _setenv(monkeypatch, NAMESPACE)
    path = tmp_path / "askd.toml"
    path.write_text("port = 7000\nadmin_port = 7001\n")
    assert (load_settings(path).port, load_settings(path).admin_port) == (7000, 7001)
    path.write_text("port = 99999\n")
    with pytest.raises(ConfigError) as err:
        load_settings(path)
    assert str(err.value).startswith(f"invalid setting port in {path}: ")  # the file, not ASKD_PORT, is to blame


def test_the_port_set_in_the_pod_is_the_setting(monkeypatch: pytest.MonkeyPatch) -> None:
    # A container's own env replaces the kubelet's variable of the same name.
    _setenv(monkeypatch, {**NAMESPACE, "ASKD_PORT": "9000", "ASKD_ADMIN_PORT": "9001"})
    s = load_settings()
    assert (s.port, s.admin_port) == (9000, 9001)


def test_a_misspelt_setting_among_the_links_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    _setenv(monkeypatch, {**NAMESPACE, "ASKD_LIMTS__MAX_CONNECTIONS": "10"})
    with pytest.raises(ConfigError) as err:
        load_settings()
    assert str(err.value) == (
        "unknown variable ASKD_LIMTS__MAX_CONNECTIONS: askd has no such setting; did you mean ASKD_LIMITS__MAX_CONNECTIONS?"
    )


HOST = {"ASKD_SERVICE_HOST": "10.96.0.12"}


@pytest.mark.parametrize(
    ("env", "message"),
    [
        # a link's shape without a Service's host: what it looks like
        ({"ASKD_SERVICE_HOST": "askd.default.svc"}, "unknown variable ASKD_SERVICE_HOST"),
        ({"askd_service_host": "10.96.0.12"}, "unknown variable askd_service_host"),  # the kubelet writes upper case
        ({"ASKD_PORT": "tcp://10.96.0.12:8765"}, "invalid setting port (ASKD_PORT)"),
        ({"ASKD_ADMIN_PORT": "tcp://10.96.0.13:8766"}, "invalid setting admin_port (ASKD_ADMIN_PORT)"),
        ({"ASKD_PORT_8765_TCP_ADDR": "10.96.0.12"}, "unknown variable ASKD_PORT_8765_TCP_ADDR"),
        # next to a Service's host, a value of the wrong form
        ({**HOST, "ASKD_PORT": "tcp://10.96.0.99:8765"}, "invalid setting port (ASKD_PORT)"),  # another address
        ({**HOST, "ASKD_PORT": "http://10.96.0.12:8765"}, "invalid setting port (ASKD_PORT)"),
        ({**HOST, "ASKD_SERVICE_PORT": "http"}, "unknown variable ASKD_SERVICE_PORT"),
        ({**HOST, "ASKD_SERVICE_PORT": "99999"}, "unknown variable ASKD_SERVICE_PORT"),
        ({**HOST, "ASKD_SERVICE_PORTT": "8765"}, "unknown variable ASKD_SERVICE_PORTT"),
        ({**HOST, "ASKD_PORT_8765_TCP": "tcp://10.96.0.12:9999"}, "unknown variable ASKD_PORT_8765_TCP"),
        ({**HOST, "ASKD_PORT_8765_TCP": "udp://10.96.0.12:8765"}, "unknown variable ASKD_PORT_8765_TCP"),
        ({**HOST, "ASKD_PORT_8765_TCP_PROTO": "udp"}, "unknown variable ASKD_PORT_8765_TCP_PROTO"),
        ({**HOST, "ASKD_PORT_8765_TCP_PORT": "08765"}, "unknown variable ASKD_PORT_8765_TCP_PORT"),
        ({**HOST, "ASKD_PORT_8765_TCP_ADDR": "10.0.0.1"}, "unknown variable ASKD_PORT_8765_TCP_ADDR"),
        ({**HOST, "ASKD_PORT_8765_HTTP": "tcp://10.96.0.12:8765"}, "unknown variable ASKD_PORT_8765_HTTP"),
        ({**HOST, "ASKD_STORE_SERVICE_HOST": "redis"}, "unknown variable ASKD_STORE_SERVICE_HOST"),
    ],
)
def test_a_link_shape_that_is_not_a_link_is_refused(monkeypatch: pytest.MonkeyPatch, env: dict[str, str], message: str) -> None:
    _setenv(monkeypatch, env)
    with pytest.raises(ConfigError) as err:
        load_settings()
    assert str(err.value).startswith(message)


def test_a_service_on_ipv6_with_several_ports() -> None:
    env = service_env("askd", "fd00:10:96::c", [(8765, "TCP", "http"), (8765, "UDP", "quic"), (9000, "SCTP", None)])
    assert env["ASKD_PORT"] == "tcp://[fd00:10:96::c]:8765"
    assert service_links(env) == set(env)
