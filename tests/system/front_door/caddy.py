"""Debian's Caddy in front of askd under ``/askd/``, on the configuration
``docs/deploy.md`` shows: its site block and its log filter are read from
the file, with the site address and the upstream pointed at the test's
daemon, and Caddy's admin endpoint and automatic HTTPS turned off
(``caddy run --config FILE --adapter caddyfile`` in a temporary directory).
So the documented Caddyfile is the tested one, as the nginx one is.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

from tests.system.front_door.conftest import DEPLOY_DOC, Proxy, free_port, listening

CADDY = Path(shutil.which("caddy") or "/usr/bin/caddy")


def documented_caddyfile() -> tuple[str, str]:
    """The site block's body and the ``log`` block of docs/deploy.md's Caddy example."""
    text = DEPLOY_DOC.read_text()
    site, log = (re.findall(r"```caddy\n(.*?)```", text, re.S) + ["", ""])[:2]
    found = re.search(r"^tools\.example\.com \{\n(.*)^\}", site, re.S | re.M)
    assert found, "docs/deploy.md: the first Caddy example has no `tools.example.com { ... }` site"
    body = found.group(1)
    assert "reverse_proxy 127.0.0.1:8765" in body, "docs/deploy.md: the Caddy example should proxy to askd's default port"
    assert log.lstrip().startswith("log {"), "docs/deploy.md: the second Caddy example should be its `log` block"
    return body, log


CONFIG = """\
{{
	admin off
	auto_https off
}}

http://127.0.0.1:{port} {{
{body}
{log}
}}
"""


def render(dir_: Path, port: int, upstream_port: int) -> str:
    body, log = documented_caddyfile()
    body = body.replace("reverse_proxy 127.0.0.1:8765", f"reverse_proxy 127.0.0.1:{upstream_port}")
    # The documented log goes to Caddy's stderr; here to a file the test reads.
    log = log.replace("log {", f"log {{\n\t\toutput file {dir_}/access.log", 1)
    return CONFIG.format(port=port, body=body.rstrip("\n"), log=log.rstrip("\n"))


class CaddyProxy(Proxy):
    """A running Caddy; its access log is JSON, one request a line."""

    def access_log(self) -> str:
        path = self.dir / "access.log"
        return path.read_text() if path.exists() else ""

    def requests(self) -> list[dict[str, Any]]:
        return [json.loads(line)["request"] for line in self.access_log().splitlines()]


async def start_caddy(dir_: Path, upstream_port: int) -> CaddyProxy:
    for _ in range(3):  # another process may take the free port first
        port = free_port()
        where = dir_ / f"caddy-{port}"
        where.mkdir(parents=True)
        conf = where / "Caddyfile"
        conf.write_text(render(where, port, upstream_port))
        env = {**os.environ, "HOME": str(where), "XDG_DATA_HOME": str(where / "data"), "XDG_CONFIG_HOME": str(where / "config")}
        # Caddy logs its own life to stderr: a file, so a full pipe never stalls it.
        with open(where / "caddy.log", "wb") as stderr:
            proc = await asyncio.create_subprocess_exec(
                str(CADDY), "run", "--config", str(conf), "--adapter", "caddyfile",
                env=env, stdout=subprocess.DEVNULL, stderr=stderr,
            )
        if await listening(proc, port):
            return CaddyProxy(port, where, proc)
        errors = (where / "caddy.log").read_text(errors="replace")
        if "address already in use" not in errors:
            raise AssertionError(f"caddy did not start:\n{conf.read_text()}\n{errors}")
    raise AssertionError("caddy found no free port in three tries")
