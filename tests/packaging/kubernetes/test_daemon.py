"""``askd serve`` in a pod's environment: the variables a Service named
``askd`` (and its neighbours) make the kubelet add, and nothing else
(issue 29: askd exited 2 with "unknown variable ASKD_SERVICE_HOST")."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import httpx

from tests.support.askd_process import free_ports, spawn
from tests.packaging.kubernetes.links import ASKD_SERVICE, NAMESPACE


def _pod_env(tmp_path: Path, links: dict[str, str], **settings: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ASKD_")}
    return {**env, **links, "ASKD_STATE_DIR": str(tmp_path / "state"), **settings}


async def test_serve_starts_among_the_links_and_answers_healthz(tmp_path: Path) -> None:
    port, admin_port = free_ports(2)
    config = tmp_path / "askd.toml"  # the ports come from the file: ASKD_PORT=tcp://... must not replace them
    config.write_text(f'host = "127.0.0.1"\nport = {port}\nadmin_port = {admin_port}\n')
    assert ASKD_SERVICE.items() <= NAMESPACE.items()  # the full set of a Service named askd, and more
    daemon = await spawn(env=_pod_env(tmp_path, NAMESPACE, ASKD_CONFIG=str(config)))
    try:
        listening = await daemon.listening()
        assert (listening["port"], listening["admin_port"]) == (port, admin_port)
        async with httpx.AsyncClient(timeout=10) as http:
            r = await http.get(f"http://127.0.0.1:{port}/healthz")
            assert (r.status_code, r.json()) == (200, {"status": "ok"})
            r = await http.get(f"http://127.0.0.1:{admin_port}/healthz")
            assert r.status_code == 200 and r.json()["status"] == "ok"
        daemon.proc.send_signal(signal.SIGTERM)
        assert await daemon.exit_code(15) == 0
    finally:
        await daemon.kill()
    assert not daemon.error_lines(), daemon.log_text()


async def test_a_misspelt_setting_in_a_pod_still_stops_serve(tmp_path: Path) -> None:
    daemon = await spawn(env=_pod_env(tmp_path, NAMESPACE, ASKD_LIMTS__MAX_CONNECTIONS="10"))
    try:
        assert await daemon.exit_code(20) == 2
    finally:
        await daemon.kill()
    lines = daemon.log_text().strip().splitlines()
    assert lines == ["askd: unknown variable ASKD_LIMTS__MAX_CONNECTIONS: askd has no such setting; did you mean ASKD_LIMITS__MAX_CONNECTIONS?"]
