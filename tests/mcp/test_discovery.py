"""How the bridge finds the daemon, and what the model reads when it cannot:
one sentence saying where askd was looked for and that `askd serve`
starts it. The bridge looks again on every call, so a daemon started after
the host spawned the bridge is found."""

from __future__ import annotations

from pathlib import Path

from askd.config import load_settings
from askd.server.app import Daemon
from tests.cli.test_subprocess import closed_port
from tests.conftest import SECRET, RunningDaemon, q
from tests.mcp.conftest import BridgeFactory
from tests.mcp.test_bridge import text

ASK = {"questions": [q("Anyone there?")], "timeoutSeconds": 0.2}


async def test_daemon_down_is_one_sentence_naming_the_url_it_was_given(daemon: RunningDaemon, bridge: BridgeFactory) -> None:
    url = f"http://127.0.0.1:{closed_port()}"
    async with bridge("--url", url, token=daemon.token("agent")) as b:
        result = await b.call("ask_user_questions", ASK)
        assert result.is_error is True and result.structured_content is None
        message = text(result)
        assert message == f"askd is not running at {url} (connection refused; given by --url): start it with `askd serve`."
        follow = await b.call("get_answer", {"requestId": "r1", "waitSeconds": 0})  # the bridge is still there
        assert follow.is_error is True


async def test_a_daemon_started_after_the_bridge_is_found_through_askd_json(tmp_path: Path, bridge: BridgeFactory) -> None:
    state_dir = tmp_path / "state"  # the bridge's ASKD_STATE_DIR, still without askd.json
    port = closed_port()
    async with bridge(token=_agent_token(), env={"ASKD_PORT": str(port)}) as b:
        down = await b.call("ask_user_questions", ASK)
        assert down.is_error is True
        assert text(down) == (
            f"askd is not running at http://127.0.0.1:{port} (connection refused; the configured address, "
            f"as no running daemon wrote askd.json in {state_dir}): start it with `askd serve`."
        )

        daemon = Daemon(load_settings(port=0, admin_port=0, state_dir=state_dir, auth={"secret": SECRET}))
        await daemon.start()  # on a port of its own choosing, written to askd.json
        try:
            up = await b.call("ask_user_questions", ASK)
        finally:
            await daemon.stop()
    assert up.structured_content["status"] == "timeout"  # asked, and ended by the daemon


def _agent_token() -> str:
    from askd import tokens

    return tokens.issue(SECRET, "agent")
