"""``askd mcp``: an MCP server on stdio, built on the SDK's low-level
``Server`` (tool schemas come from askd's models, not from function
signatures). stdout carries the protocol and nothing else: logs go to
stderr, and while serving the SDK points fd 1 at stderr, so a stray print
cannot corrupt the stream either.
"""

from __future__ import annotations

import logging
import sys

import anyio
from mcp import types
from mcp.server import Server
from mcp.server.request_state import RequestStateBoundary, RequestStateSecurity
from mcp.server.stdio import stdio_server

from askd import __version__
from askd.mcp.bridge import Bridge, BridgeConfig
from askd.mcp.tasks import Tasks
from askd.server import logs

REQUEST_STATE_SECONDS = 86400.0  # how long the person may take in the host's dialog (InputRequiredResult era)

INSTRUCTIONS = (
    "askd asks the user a question and waits for the answer, however long the user is away. "
    "Call ask_user_questions when you need a decision only the user can make; if it returns "
    "status pending, call get_answer with its requestId. Before an action that needs the user's permission, "
    "call request_approval and run it only when approved, with the arguments the result gives."
)


def build_server(bridge: Bridge) -> Server:
    server: Server = Server(
        "askd",
        version=__version__,
        title="askd",
        instructions=INSTRUCTIONS,
        on_list_tools=bridge.list_tools,
        on_call_tool=bridge.call_tool,
    )
    server.add_notification_handler("notifications/cancelled", types.CancelledNotificationParams, bridge.on_cancelled)
    # MCP Tasks (protocol section 22): tools/call of the question and
    # approval tools as tasks for a host that declares the extension.
    Tasks(bridge).install(server)
    # The requestState of an InputRequiredResult comes back from the host:
    # sealed under a key of this process, bound to the call, so a host can
    # neither read nor forge which question a reply answers.
    server.middleware.append(RequestStateBoundary(RequestStateSecurity.ephemeral(ttl=REQUEST_STATE_SECONDS), default_audience="askd"))
    return server


async def serve_stdio(bridge: Bridge) -> None:
    server = build_server(bridge)
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


def run(cfg: BridgeConfig, log_level: str = "info") -> None:
    """Serve until the host closes stdin."""
    logs.configure(log_level, "console" if sys.stderr.isatty() else "json", stream=sys.stderr)
    if log_level != "debug":  # one line per long-poll slice says nothing the bridge's own lines do not
        logging.getLogger("httpx").setLevel(logging.WARNING)
    log = logs.get_logger("askd.mcp")
    log.info("mcp.started", userId=cfg.user, sessionId=cfg.session, maxWait=cfg.max_wait, elicit=cfg.elicit)
    anyio.run(serve_stdio, Bridge(cfg))
    log.info("mcp.stopped", reason="stdin closed")
