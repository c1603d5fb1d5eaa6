"""The three tools: their arguments, their JSON schemas and their results.

The schemas are generated from askd's own wire definitions (``askd.protocol``):
the tool asks with the HTTP API's ``AskFields`` and answers with its
``QuestionResult`` (``request_approval``'s arguments: ``askd.mcp.approval``), so the tools cannot drift from the daemon. Results carry
the result object as structured content plus a text block a model reads
easily ("Which database? → SQLite").
"""

from __future__ import annotations

import copy
from typing import Any

from mcp import types
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from askd.client import Result, Status
from askd.mcp.approval import APPROVE, APPROVE_DESCRIPTION, RequestApprovalArgs, describe_approval
from askd.protocol.ids import Id
from askd.protocol.models import AskFields, json_number
from askd.protocol.parse import adapter, parse
from askd.protocol.results import QuestionResult

ASK = "ask_user_questions"
GET = "get_answer"


class GetAnswerArgs(BaseModel):
    """Arguments of ``get_answer``."""

    model_config = ConfigDict(extra="forbid", strict=True)

    requestId: Id = Field(description="The requestId an earlier ask_user_questions result gave.")
    waitSeconds: float | None = Field(
        default=None, ge=0, description="Wait at most this long (default: until the question ends); 0 reads it now."
    )

    _wait_number = field_validator("waitSeconds", mode="before")(json_number)


def _inline(node: Any, defs: dict[str, Any]) -> Any:
    """Resolve local ``$ref``s and drop generated titles: some hosts accept
    neither ``$defs`` nor ``$ref`` in a tool schema, and titles like
    "Requestid" only add noise. Our models are not recursive."""
    if isinstance(node, list):
        return [_inline(item, defs) for item in node]
    if not isinstance(node, dict):
        return node
    ref = node.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/"):
        return _inline(copy.deepcopy(defs[ref.removeprefix("#/$defs/")]), defs)
    return {k: _inline(v, defs) for k, v in node.items() if k != "$defs" and not (k == "title" and isinstance(v, str))}


def schema(model: type[Any]) -> dict[str, Any]:
    """A tool schema from a model or a ``TypedDict``: self-contained, without
    its docstring (written for developers, not for the model)."""
    raw = adapter(model).json_schema()
    out: dict[str, Any] = _inline(raw, raw.get("$defs", {}))
    out.pop("description", None)
    return out


ASK_DESCRIPTION = (
    "Ask the user (a person) one or more questions and wait for the answers. Use it when you need a decision "
    "or information only the user has. A question may offer options (the user may still type their own answer); "
    "multiSelect lets the user pick several. The answers come back keyed by question text. The question reaches "
    "the user even if they are away for a while; if the result says pending, call get_answer with its requestId "
    "to keep waiting."
)
GET_DESCRIPTION = (
    "Keep waiting for the answer to a question asked earlier with ask_user_questions, by its requestId. "
    "Returns the same result as ask_user_questions."
)


def tool_list(max_questions: int) -> list[types.Tool]:
    """The tools; ``max_questions`` is the configured limit of one ask
    (``limits.max_questions``), which the model validator checks at run time."""
    output = schema(QuestionResult)
    ask_input = schema(AskFields)
    ask_input["properties"]["questions"].update(minItems=1, maxItems=max_questions)
    return [
        types.Tool(
            name=ASK,
            title="Ask the user",
            description=ASK_DESCRIPTION,
            input_schema=ask_input,
            output_schema=output,
            annotations=types.ToolAnnotations(read_only_hint=False, destructive_hint=False, open_world_hint=True),
        ),
        types.Tool(
            name=GET,
            title="Get the user's answer",
            description=GET_DESCRIPTION,
            input_schema=schema(GetAnswerArgs),
            output_schema=output,
            annotations=types.ToolAnnotations(read_only_hint=True, open_world_hint=True),
        ),
        types.Tool(
            name=APPROVE,
            title="Ask the user's approval",
            description=APPROVE_DESCRIPTION,
            input_schema=schema(RequestApprovalArgs),
            output_schema=output,
            annotations=types.ToolAnnotations(read_only_hint=False, destructive_hint=False, open_world_hint=True),
        ),
    ]


def invalid_arguments(tool: str, err: ValidationError) -> str:
    """One sentence naming each bad field (at most five), never echoing input."""
    problems = []
    for e in err.errors()[:5]:
        where = ".".join(str(p) for p in e["loc"]) or "arguments"
        problems.append(f"{where}: {e['msg'].removeprefix('Value error, ')}")
    return f"Invalid arguments for {tool}: " + "; ".join(problems) + "."


def _value(value: Any) -> str:
    return ", ".join(str(v) for v in value) if isinstance(value, list) else str(value)


def describe(result: Result, user: str) -> str:
    """The text block: what a model needs to go on, in plain words."""
    if result.approvals is not None:  # an approval (protocol section 17): its own words
        return describe_approval(result, user)
    if result.status is Status.answered:
        answers = result.answers or {}
        return "\n".join(f"{question} → {_value(value)}" for question, value in answers.items())
    if result.status is Status.pending:
        return (
            f"{user} has not answered yet; the question is still open. "
            f'Call get_answer with requestId "{result.request_id}" to keep waiting.'
        )
    if result.defaulted:
        answers = "\n".join(f"{question} → {_value(value)}" for question, value in (result.answers or {}).items())
        return f"{user} did not answer in time; your onTimeout default stands:\n{answers}"
    if result.status is Status.timeout:
        return f"{user} did not answer in time ({result.error or 'timed out'}); the question is closed."
    if result.status is Status.declined:
        who = result.answered_by or "An admin"
        why = f": {result.reason}" if result.reason else ""
        return f"{who} declined to answer{why}. Do not ask the same again; go on without it or ask differently."
    return f"The question was cancelled ({result.error or 'cancelled'}); {user} will not answer it."


def tool_result(result: Result, user: str) -> types.CallToolResult:
    """``isError`` is false for an answer, a still-open question, a decline
    or a denial (the person's reply, which the model must act on) or a
    timeout that took the onTimeout default; true for a plain timeout or a cancel."""
    # As askd sent it: answeredBy null (an admin without a name) is kept.
    checked = parse(QuestionResult, result.raw)
    structured = adapter(QuestionResult).dump_python({k: v for k, v in checked.items() if k in result.raw}, mode="json")
    return types.CallToolResult(
        content=[types.TextContent(text=describe(result, user))],
        structured_content=structured,
        is_error=result.status in (Status.timeout, Status.cancelled) and not result.defaulted,
    )


def tool_error(message: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(text=message)], is_error=True)
