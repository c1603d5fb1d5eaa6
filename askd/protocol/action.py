"""Approvals on the wire (protocol section 17): an ask's ``action``, the
``approve`` a person sends, and the check of arguments against the
action's JSON Schema.

The schema is checked with ``jsonschema`` (draft 2020-12), never by hand:
when the ask comes (the schema itself, then the arguments given) and on
every edit a person approves with. It fetches no remote ``$ref``: a
reference it cannot resolve is a problem of the schema.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError, best_match
from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StrictBool, StrictStr, field_validator

from askd.protocol.ids import Id
from askd.protocol.visible import NO_CONTROLS_PATTERN, refuse_controls

MAX_NAME = 200
MAX_SUMMARY = 4000  # characters
MAX_PREVIEW_BYTES = 32 * 1024  # UTF-8 bytes
MAX_QUORUM = 20

#: How long an approval holds: this once, or always (offered with allowAlways).
Scope = Literal["once", "always"]


class Action(BaseModel):
    """What an agent asks permission to run: ``action`` in an ask."""

    model_config = ConfigDict(extra="forbid", strict=True, populate_by_name=True)

    # No control character: a name is one line wherever it shows (a mail's
    # Subject cannot hold a line break, protocol section 17); a
    # bidirectional or zero-width one is shown marked, not refused.
    name: Annotated[
        StrictStr,
        Field(min_length=1, max_length=MAX_NAME, json_schema_extra={"pattern": NO_CONTROLS_PATTERN}),
        AfterValidator(refuse_controls),
    ] = Field(description="What will run (Bash, deploy, mcp__github__merge_pr): 1 to 200 characters, no control character.")
    arguments: dict[str, Any] = Field(description="What it will run with: a JSON object.")
    summary: Annotated[StrictStr, Field(max_length=MAX_SUMMARY)] | None = Field(
        default=None, description="Why, in words (Markdown), at most 4,000 characters."
    )
    preview: StrictStr | None = Field(
        default=None, description="What it will change (Markdown: a diff, a command), at most 32 KiB."
    )
    schema_: dict[str, Any] | StrictBool | None = Field(
        default=None,
        alias="schema",
        description="A JSON Schema (draft 2020-12) the arguments must satisfy, as asked and as edited.",
    )
    editable: StrictBool = Field(default=False, description="The person may change the arguments before approving.")
    allowAlways: StrictBool = Field(default=False, description="Offer Approve always beside Approve.")

    @field_validator("preview")
    @classmethod
    def _preview_size(cls, v: str | None) -> str | None:
        if v is not None and len(v.encode("utf-8", "surrogatepass")) > MAX_PREVIEW_BYTES:
            raise ValueError(f"must be at most {MAX_PREVIEW_BYTES} bytes (32 KiB)")
        return v

    @field_validator("schema_")
    @classmethod
    def _schema_valid(cls, v: Any) -> Any:
        if v is not None:
            problem = schema_problem(v)
            if problem is not None:
                raise ValueError(problem)
        return v


class ApproveBody(BaseModel):
    """``POST /admin/v1/sessions/{S}/questions/{R}/approve``: one approval,
    by the admin token's ``sub``."""

    model_config = ConfigDict(extra="forbid", strict=True)

    arguments: dict[str, Any] | None = Field(default=None, description="Edited arguments (an editable action only).")
    scope: Scope | None = Field(default=None, description="once (default), or always when the action allows it.")


def schema_problem(schema: Any) -> str | None:
    """What is wrong with ``schema`` as a draft 2020-12 JSON Schema, or None."""
    try:
        Draft202012Validator.check_schema(schema)
    except SchemaError as err:
        where = "/".join(str(p) for p in err.absolute_path)
        return f"not a valid JSON Schema (draft 2020-12){' at ' + where if where else ''}: {err.message}"[:500]
    return None


def arguments_problem(schema: Any, arguments: Any) -> tuple[str, str] | None:
    """Where and how ``arguments`` fail ``schema`` (a path below
    ``arguments``, dotted, "" for the object itself, and a message), or None
    when they satisfy it (or there is no schema)."""
    if schema is None:
        return None
    try:
        error = best_match(Draft202012Validator(schema).iter_errors(arguments))
    except Exception as err:  # an unresolvable $ref and the like: the schema's fault
        return "", f"the action's schema cannot be applied: {type(err).__name__}"
    if error is None:
        return None
    return ".".join(str(p) for p in error.absolute_path), error.message[:500]

