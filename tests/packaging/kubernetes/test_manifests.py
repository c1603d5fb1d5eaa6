"""packaging/kubernetes/: the manifests docs/deploy.md shows parse, set only
settings askd has (to values it takes), and agree with each other and with
askd's defaults: the probes' port and paths, the Services, Redis."""

from __future__ import annotations

import os
import re
import signal
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest
import yaml

from askd.config import load_settings
from askd.config.environment import setting_variables
from askd.config.settings import Settings
from askd.server.front_door.door import HostRule
from tests.support.askd_process import free_ports, spawn

ROOT = Path(__file__).resolve().parents[3]
MANIFESTS = ROOT / "packaging" / "kubernetes"
DEPLOY_MD = ROOT / "docs" / "deploy.md"
POD_NAME = "askd-5d9c7b8f6d-x2x9z"


def _documents() -> list[dict[str, Any]]:
    docs = []
    for path in sorted(MANIFESTS.glob("*.yaml")):
        docs.extend(d for d in yaml.safe_load_all(path.read_text()) if d is not None)
    return docs


DOCS = _documents()


def _one(kind: str, name: str) -> dict[str, Any]:
    [doc] = [d for d in DOCS if d["kind"] == kind and d["metadata"]["name"] == name]
    return doc


def _container(deployment: dict[str, Any]) -> dict[str, Any]:
    [container] = deployment["spec"]["template"]["spec"]["containers"]
    return container


def _port(container: dict[str, Any], name: str) -> int:
    [port] = [p["containerPort"] for p in container["ports"] if p["name"] == name]
    return port


def _secret_keys() -> set[tuple[str, str]]:
    found = set()

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            if "secretKeyRef" in node:
                found.add((node["secretKeyRef"]["name"], node["secretKeyRef"]["key"]))
            for v in node.values():
                walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)

    walk(DOCS)
    return found


def pod_env(container: dict[str, Any]) -> dict[str, str]:
    """The container's environment as the kubelet builds it: secrets (made
    as docs/deploy.md says), the downward API, ``$(VAR)`` of earlier variables."""
    env: dict[str, str] = {}
    for var in container["env"]:
        if "value" in var:
            value = re.sub(r"\$\((\w+)\)", lambda m: env.get(m.group(1), m.group(0)), str(var["value"]))
        elif "secretKeyRef" in var["valueFrom"]:
            value = {"auth-secret": "s" * 64, "redis-password": "ab12" * 16}[var["valueFrom"]["secretKeyRef"]["key"]]
        else:
            assert var["valueFrom"]["fieldRef"]["fieldPath"] == "metadata.name"
            value = POD_NAME
        env[var["name"]] = value
    return env


def test_every_document_is_a_named_object() -> None:
    assert {d["kind"] for d in DOCS} >= {"Deployment", "Service", "PersistentVolumeClaim", "NetworkPolicy", "Ingress"}
    for doc in DOCS:
        assert doc["apiVersion"] and doc["metadata"]["name"], doc


def test_askd_sets_only_settings_and_they_load(monkeypatch: pytest.MonkeyPatch) -> None:
    deployment = _one("Deployment", "askd")
    pod = deployment["spec"]["template"]["spec"]
    assert deployment["spec"]["replicas"] > 1  # several replicas: the shared store is what makes that work
    assert pod["enableServiceLinks"] is False
    env = pod_env(_container(deployment))
    names = [n for n in env if n.upper().startswith("ASKD_")]
    assert set(names) <= set(setting_variables(Settings)), set(names) - set(setting_variables(Settings))
    for name in names:
        monkeypatch.setenv(name, env[name])
    s = load_settings()
    assert (s.host, s.admin_host, s.node_id) == ("0.0.0.0", "127.0.0.1", POD_NAME)
    assert s.auth.secret is not None and s.store.startswith("redis://")
    # the kubelet's probes name the pod's IP as Host
    assert HostRule([s.host, s.admin_host], s.allowed_hosts).allows("10.244.1.7")
    assert HostRule([s.host, s.admin_host], s.allowed_hosts).allows("askd")  # agents in the namespace

    # Redis: the store URL names its Service and port, with the password Redis requires
    store = urlsplit(s.store)
    redis = _one("Deployment", "askd-redis")
    redis_service = _one("Service", "askd-redis")
    assert (store.hostname, store.port) == ("askd-redis", redis_service["spec"]["ports"][0]["port"])
    assert redis_service["spec"]["ports"][0]["targetPort"] == "redis"
    assert _port(_container(redis), "redis") == 6379
    assert store.password == "ab12" * 16
    args = _container(redis)["args"]
    for flag, value in [("--appendonly", "yes"), ("--maxmemory-policy", "noeviction"), ("--requirepass", "$(REDIS_PASSWORD)")]:
        assert args[args.index(flag) + 1] == value  # docs/scaling.md, "What Redis must keep"
    assert redis["spec"]["replicas"] == 1
    assert redis_service["spec"]["selector"].items() <= redis["spec"]["template"]["metadata"]["labels"].items()
    policy = _one("NetworkPolicy", "askd-redis")  # only askd's pods reach Redis
    assert policy["spec"]["podSelector"]["matchLabels"] == redis_service["spec"]["selector"]
    [rule] = policy["spec"]["ingress"]
    assert rule["from"][0]["podSelector"]["matchLabels"].items() <= deployment["spec"]["template"]["metadata"]["labels"].items()
    assert rule["ports"] == [{"port": "redis"}]


def test_probes_and_service_meet_the_public_listener() -> None:
    deployment = _one("Deployment", "askd")
    container = _container(deployment)
    http = _port(container, "http")
    assert http == Settings.model_fields["port"].default  # askd's own default: the manifest sets no port
    for probe in ("startupProbe", "readinessProbe"):
        assert container[probe]["httpGet"] == {"path": "/healthz", "port": "http"}, probe
    assert container["livenessProbe"]["httpGet"]["port"] == "http"
    service = _one("Service", "askd")
    assert service["spec"]["ports"] == [{"name": "http", "port": http, "targetPort": "http"}]
    labels = deployment["spec"]["template"]["metadata"]["labels"]
    assert service["spec"]["selector"].items() <= labels.items()
    assert deployment["spec"]["selector"]["matchLabels"].items() <= labels.items()


def test_the_ingress_reaches_the_service_at_the_public_url() -> None:
    ingress = _one("Ingress", "askd")
    env = pod_env(_container(_one("Deployment", "askd")))
    public = urlsplit(env["ASKD_PUBLIC_URL"])
    [rule] = ingress["spec"]["rules"]
    assert rule["host"] == public.hostname and public.scheme == "https"
    assert ingress["spec"]["tls"][0]["hosts"] == [public.hostname]
    [path] = rule["http"]["paths"]
    assert (path["path"], path["backend"]["service"]) == (public.path, {"name": "askd", "port": {"name": "http"}})
    limits = Settings.model_fields["limits"].default_factory()  # type: ignore[misc]
    timeout = int(ingress["metadata"]["annotations"]["nginx.ingress.kubernetes.io/proxy-read-timeout"])
    assert timeout > limits.max_wait_seconds  # an agent's longest ?wait= fits


def test_the_docs_make_the_secret_the_manifests_read() -> None:
    text = DEPLOY_MD.read_text()
    keys = _secret_keys()
    assert {name for name, _ in keys} == {"askd"}
    for _, key in keys:
        assert f"--from-literal={key}=" in text, key
    for path in MANIFESTS.glob("*.yaml"):
        assert f"packaging/kubernetes/{path.name}" in text, path.name


async def test_a_daemon_with_the_manifests_settings_answers_every_probe(tmp_path: Path) -> None:
    # The manifest's settings, but the memory store (no Redis here) and this
    # machine's loopback on free ports.
    container = _container(_one("Deployment", "askd"))
    port, admin_port = free_ports(2)
    env = {k: v for k, v in os.environ.items() if not k.startswith("ASKD_")}
    env.update({k: v for k, v in pod_env(container).items() if k.startswith("ASKD_")})
    env.update(
        ASKD_STORE="memory", ASKD_HOST="127.0.0.1", ASKD_PORT=str(port), ASKD_ADMIN_PORT=str(admin_port),
        ASKD_STATE_DIR=str(tmp_path / "state"),
    )
    daemon = await spawn(env=env)
    try:
        await daemon.listening()
        async with httpx.AsyncClient(timeout=10) as http:
            for probe in ("startupProbe", "readinessProbe", "livenessProbe"):
                r = await http.get(f"http://127.0.0.1:{port}{container[probe]['httpGet']['path']}")
                assert r.status_code == 200, (probe, r.status_code, r.text[:200])
        daemon.proc.send_signal(signal.SIGTERM)
        assert await daemon.exit_code(15) == 0
    finally:
        await daemon.kill()
