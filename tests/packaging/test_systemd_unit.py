"""packaging/askd.service: systemd accepts every line of it, and it keeps
the user, state directory, hardening and command the docs promise."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.packaging.roundtrip import ROOT

UNIT = ROOT / "packaging" / "askd.service"


def directives() -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for line in UNIT.read_text().splitlines():
        if "=" in line and not line.startswith(("#", ";")):
            key, value = line.split("=", 1)
            out.setdefault(key.strip(), []).append(value.strip())
    return out


def test_unit_runs_askd_hardened_with_its_own_state() -> None:
    d = directives()
    assert d["ExecStart"] == ["/usr/local/bin/askd serve --config /etc/askd/askd.toml"]
    assert d["DynamicUser"] == ["yes"] and d["StateDirectory"] == ["askd"]
    assert "ASKD_STATE_DIR=%S/askd" in d["Environment"]
    assert d["Restart"] == ["on-failure"]
    for key in ("NoNewPrivileges", "ProtectHome", "PrivateTmp"):
        assert d[key] == ["yes"], key
    assert d["ProtectSystem"] == ["strict"]
    assert d["RestrictAddressFamilies"] == ["AF_INET AF_INET6 AF_UNIX"]


@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="systemd-analyze is not installed")
def test_systemd_accepts_every_line(tmp_path: Path) -> None:
    # verify also wants ExecStart's file to exist: point it at one that does.
    unit = tmp_path / "askd.service"
    unit.write_text(UNIT.read_text().replace("/usr/local/bin/askd", sys.executable))
    proc = subprocess.run(["systemd-analyze", "verify", str(unit)], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and proc.stderr.strip() == "", proc.stderr
