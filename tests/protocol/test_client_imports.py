"""The Python client loads the wire (askd.protocol) and nothing of the
daemon (issue 31): neither the engine (askd.core, askd.server) nor the
daemon's settings (askd.config, which brings the mail channel), on import or when
a client is made with its URL and token. A bare ``import askd.client``
loads nothing more than the package itself (its names are imported when
first used, so ``askd hook`` pays only for what it calls). Each check runs
in a fresh interpreter, so nothing another test imported counts."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

DAEMON = ("askd.core", "askd.server", "askd.config", "askd.channels", "askd.store", "tornado")

MAKE = {
    "the wire alone": "import askd.protocol.schema, askd.protocol.frames, askd.protocol.parse",
    "import": "import askd.client",
    "agent": "from askd.client import AgentClient; AgentClient(url='http://127.0.0.1:9', token='t')",
    "async agent": "from askd.client import AsyncAgentClient; AsyncAgentClient(url='http://127.0.0.1:9', token='t')",
    "user": "from askd.client import UserClient; UserClient(url='http://127.0.0.1:9', token='t')",
    "admin": "from askd.client import AdminClient; AdminClient(url='http://127.0.0.1:9', token='t')",
    "result": "from askd.client import Result; Result.from_json({'requestId': 'r', 'sessionId': 's', 'status': 'pending'})",
}


def loaded_after(code: str) -> list[str]:
    script = f"{code}\nimport sys, json; print(json.dumps(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout
    return json.loads(out.splitlines()[-1])  # type: ignore[no-any-return]


@pytest.mark.parametrize("what", list(MAKE))
def test_the_client_loads_nothing_of_the_daemon(what: str) -> None:
    loaded = loaded_after(MAKE[what])
    daemon = [m for m in loaded if m.startswith(DAEMON) and (m in DAEMON or m.startswith(tuple(d + "." for d in DAEMON)))]
    assert daemon == [], f"{what} loads the daemon's {daemon}"
    if what == "import":
        assert [m for m in loaded if m.startswith("askd.")] == ["askd.client"]
    else:
        assert "askd.protocol" in loaded


def test_discovery_loads_the_settings_only_when_it_needs_them() -> None:
    loaded = loaded_after("from askd.client import Discovery; Discovery().settings")
    assert "askd.config" in loaded
