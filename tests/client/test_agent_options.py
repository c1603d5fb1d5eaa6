"""The agents' public keywords, written once (``AskOptions``,
``ApprovalOptions``) and shared by ``AgentClient`` and ``AsyncAgentClient``:
every keyword and default the README and protocol sections 5 and 17 name
stays as it was, positional ones included, and the shared options each reach
the body they are for."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

import pytest

from askd.client import AgentClient, AsyncAgentClient
from askd.client.agent_calls import ApprovalOptions, AskOptions, approval_body, ask_body

EMPTY = inspect.Parameter.empty

# (name, kind, default) of ask and submit, as callers may pass them.
ASK_PARAMETERS = [
    ("session", "POSITIONAL_OR_KEYWORD", EMPTY),
    ("user", "POSITIONAL_OR_KEYWORD", EMPTY),
    ("questions", "POSITIONAL_OR_KEYWORD", EMPTY),
    ("metadata", "POSITIONAL_OR_KEYWORD", None),
    ("timeout", "POSITIONAL_OR_KEYWORD", None),
    ("require_online", "POSITIONAL_OR_KEYWORD", False),
    ("parent_session", "POSITIONAL_OR_KEYWORD", None),
    ("idempotency_key", "KEYWORD_ONLY", None),
    ("max_extension", "KEYWORD_ONLY", None),
    ("on_timeout", "KEYWORD_ONLY", None),
    ("to", "KEYWORD_ONLY", None),
    ("escalate", "KEYWORD_ONLY", None),
    ("remind", "KEYWORD_ONLY", None),
    ("host_key", "KEYWORD_ONLY", None),
]

APPROVAL_PARAMETERS = [
    ("session", "POSITIONAL_OR_KEYWORD", EMPTY),
    ("name", "POSITIONAL_OR_KEYWORD", EMPTY),
    ("arguments", "POSITIONAL_OR_KEYWORD", EMPTY),
    ("idempotency_key", "KEYWORD_ONLY", None),
    ("wait", "KEYWORD_ONLY", True),
    ("summary", "KEYWORD_ONLY", None),
    ("preview", "KEYWORD_ONLY", None),
    ("schema", "KEYWORD_ONLY", None),
    ("editable", "KEYWORD_ONLY", False),
    ("allow_always", "KEYWORD_ONLY", False),
    ("quorum", "KEYWORD_ONLY", None),
    ("user", "KEYWORD_ONLY", None),
    ("to", "KEYWORD_ONLY", None),
    ("metadata", "KEYWORD_ONLY", None),
    ("timeout", "KEYWORD_ONLY", None),
    ("require_online", "KEYWORD_ONLY", False),
    ("parent_session", "KEYWORD_ONLY", None),
    ("max_extension", "KEYWORD_ONLY", None),
    ("escalate", "KEYWORD_ONLY", None),
    ("remind", "KEYWORD_ONLY", None),
    ("host_key", "KEYWORD_ONLY", None),
]


def _keys(options: Any) -> set[str]:
    return set(options.__required_keys__ | options.__optional_keys__)


def effective(method: Callable[..., Any], options: Any, body_builder: Callable[..., Any]) -> list[tuple[str, str, Any]]:
    """The method's parameters as a caller sees them: its own, then each key of
    its ``**options`` TypedDict with the default the body builder gives it."""
    own = [p for p in inspect.signature(method).parameters.values() if p.name != "self"]
    assert own[-1].kind is inspect.Parameter.VAR_KEYWORD, f"{method.__qualname__} takes no **options"
    built = inspect.signature(body_builder).parameters
    assert _keys(options) <= set(built), f"{options.__name__} names keywords {body_builder.__name__} does not take"
    listed = [(p.name, p.kind.name, p.default) for p in own[:-1]]
    return listed + [(name, "KEYWORD_ONLY", built[name].default) for name in sorted(_keys(options))]


def by_name(parameters: list[tuple[str, str, Any]]) -> dict[str, tuple[str, Any]]:
    names = [name for name, _, _ in parameters]
    assert len(names) == len(set(names)), f"a keyword is named twice: {names}"
    return {name: (kind, default) for name, kind, default in parameters}


@pytest.mark.parametrize("client", [AgentClient, AsyncAgentClient])
@pytest.mark.parametrize("call", ["ask", "submit"])
def test_ask_and_submit_keep_their_documented_keywords_and_defaults(client: type, call: str) -> None:
    got = effective(getattr(client, call), AskOptions, ask_body)
    positional = [name for name, kind, _ in got if kind == "POSITIONAL_OR_KEYWORD"]
    assert positional == ["session", "user", "questions", "metadata", "timeout", "require_online", "parent_session"]
    assert by_name(got) == by_name(ASK_PARAMETERS)


@pytest.mark.parametrize("client", [AgentClient, AsyncAgentClient])
def test_request_approval_keeps_its_documented_keywords_and_defaults(client: type) -> None:
    got = effective(client.request_approval, ApprovalOptions, approval_body)
    assert by_name(got) == by_name(APPROVAL_PARAMETERS)


def test_the_body_builders_take_every_option_and_nothing_else() -> None:
    """``ask_body`` after ``parent_session`` and ``approval_body`` after
    ``arguments`` take exactly the options the agents pass them."""
    ask_tail = list(inspect.signature(ask_body).parameters)
    assert set(ask_tail[ask_tail.index("parent_session") + 1 :]) == _keys(AskOptions)
    approval_tail = [p.name for p in inspect.signature(approval_body).parameters.values() if p.kind is p.KEYWORD_ONLY]
    assert set(approval_tail) == _keys(ApprovalOptions)


def test_every_ask_option_reaches_the_body() -> None:
    options: AskOptions = {
        "max_extension": 30.0,
        "on_timeout": {"Deploy?": "no"},
        "to": ["group:oncall", "bob"],
        "escalate": [(60.0, ["carol"])],
        "remind": (90.0, 2),
        "host_key": "k" * 32,
    }
    body = ask_body(None, "Deploy?", {"m": 1}, 60.0, True, "parent", **options)
    assert body == {
        "questions": [{"question": "Deploy?"}],
        "to": ["group:oncall", "bob"],
        "escalate": [{"afterSeconds": 60.0, "to": ["carol"]}],
        "remind": {"everySeconds": 90.0, "times": 2},
        "maxExtensionSeconds": 30.0,
        "onTimeout": {"answers": {"Deploy?": "no"}},
        "metadata": {"m": 1},
        "timeoutSeconds": 60.0,
        "requireOnline": True,
        "parentSessionId": "parent",
        "hostKey": "k" * 32,
    }


def test_an_unknown_keyword_is_still_refused_before_sending() -> None:
    client = AgentClient(url="http://127.0.0.1:9", token="t")
    try:
        with pytest.raises(TypeError, match="timeout_seconds"):
            client.submit("s1", "alice", "Deploy?", timeout_seconds=60)
    finally:
        client.close()
