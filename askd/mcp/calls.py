"""What every tool call of the bridge shares: the one-sentence failures a
model reads, and reading a host's retry of an ``InputRequiredResult``."""

from __future__ import annotations

import os

from mcp import types
from pydantic import ValidationError

from askd.client import Discovery
from askd.client.errors import ApiError, AuthError, DaemonUnavailable, QuestionLost
from askd.config import ConfigError
from askd.protocol import codec

HOST_KEY = "answer"  # the one input request of an InputRequiredResult


class CallFailed(Exception):
    """A call that ends in a tool error: the message is the sentence the model reads."""


def where(found: Discovery, explicit: str | None) -> str:
    """Why the bridge looked at that address, for the daemon-down sentence."""
    if explicit:
        return "given by --url"
    if os.environ.get("ASKD_URL"):
        return "from ASKD_URL"
    state_dir = found.settings.state_dir
    if found.runtime() is not None:
        return f"from {state_dir / 'askd.json'}"
    return f"the configured address, as no running daemon wrote askd.json in {state_dir}"


def failure(err: Exception) -> str:
    """One sentence for the model and the person reading its transcript."""
    if isinstance(err, ConfigError):
        message = f"askd's configuration is invalid: {err}"
    elif isinstance(err, DaemonUnavailable):
        message = f"askd stopped answering at {err.url} ({err.reason}); `askd serve` starts it"
    elif isinstance(err, AuthError):
        message = f"askd refused the agent token ({err.status} {err.code}: {err.message}); pass --token or ASKD_AGENT_TOKEN"
    elif isinstance(err, ApiError):
        where = "; ".join(f"{d.get('loc') or 'body'}: {d.get('msg')}" for d in (err.details or [])[:5])
        message = f"askd refused the call: {err.message}" + (f" ({where})" if where else "")
    elif isinstance(err, QuestionLost):
        message = (
            f"askd does not know question {err.request_id} in session {err.session_id}: "
            "it was never asked here, or it ended too long ago"
        )
    else:  # CallFailed, NoToken: already the sentence
        message = str(err)
    return message if message.endswith(".") else message + "."


def resumed(params: types.CallToolRequestParams) -> str | None:
    """The requestId of an ``InputRequiredResult`` the host now answers;
    the SDK's request-state boundary has checked the state's seal already."""
    if params.request_state is None:
        return None
    try:
        state = codec.loads(params.request_state)
        return str(state["requestId"])
    except (ValueError, KeyError, TypeError):
        raise CallFailed("askd mcp cannot read the requestState of this call; call the tool again without it") from None


def host_reply(params: types.CallToolRequestParams) -> types.ElicitResult | None:
    reply = (params.input_responses or {}).get(HOST_KEY)
    if isinstance(reply, types.ElicitResult):
        return reply
    try:
        return types.ElicitResult.model_validate(reply.model_dump(by_alias=True) if reply is not None else None)
    except ValidationError:
        return None
