"""The MCP host as a channel: the questions as an elicitation form, and the
form's reply as askd answers.

A host that declares form elicitation shows the person a form while the
tool call waits on askd. The form has one field per question (``q1``,
``q2``, ...): an enum of the option labels, an array of those enums for a
``multiSelect`` question, a string for a question without options; a
question with options also gets a string field for an answer of the
person's own ("Other"), as the page offers. Every field is optional: askd
takes an answer to some of the questions, as from a tab.

An approval (protocol section 17) is a form of its own: the action in the
message (name, summary, arguments, preview) and one choice, *Approve* or
*Deny*, with an optional reason for a denial.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from mcp import types
from mcp_types.version import is_version_at_least

# The protocol version from which server requests are replaced by InputRequiredResult.
INPUT_REQUIRED_VERSION = "2026-07-28"
MAX_MESSAGE_CHARS = 2000  # hosts show the message in a dialog: keep it short


def declares_form(capabilities: types.ClientCapabilities | None) -> bool:
    """Whether the host takes form elicitations. An empty ``elicitation``
    object is form mode (the 2025-06-18 shape, before modes existed)."""
    if capabilities is None or capabilities.elicitation is None:
        return False
    declared = capabilities.elicitation
    return declared.form is not None or declared.url is None


def input_required_era(protocol_version: str) -> bool:
    """True where the host is asked through ``InputRequiredResult`` rather
    than an ``elicitation/create`` request."""
    return is_version_at_least(protocol_version, INPUT_REQUIRED_VERSION)


@dataclass(frozen=True)
class HostForm:
    """One ask as a form: what the host shows, and how to read its reply."""

    message: str
    schema: dict[str, Any]
    questions: tuple[Mapping[str, Any], ...]

    def request(self) -> types.ElicitRequest:
        return types.ElicitRequest(params=types.ElicitRequestFormParams(message=self.message, requested_schema=self.schema))

    def answers(self, content: Mapping[str, Any] | None) -> dict[str, Any]:
        """askd's answers from an accepted form: empty when the person
        filled in nothing usable."""
        content = content or {}
        out: dict[str, Any] = {}
        for i, q in enumerate(self.questions, 1):
            value, other = content.get(f"q{i}"), _text(content.get(f"q{i}_other"))
            labels = _labels(q)
            if q.get("multiSelect") and labels:
                picked = [v for v in value if isinstance(v, str) and v in labels] if isinstance(value, list) else []
                if other:
                    picked.append(other)
                if picked:
                    out[q["question"]] = picked
            elif other:
                out[q["question"]] = other
            elif _text(value):
                out[q["question"]] = _text(value)
        return out


def _text(value: Any) -> str:
    return value.strip() if isinstance(value, str) else ""


def _labels(question: Mapping[str, Any]) -> list[str]:
    return [o["label"] for o in question.get("options") or [] if isinstance(o, Mapping) and isinstance(o.get("label"), str)]


def _field_title(question: Mapping[str, Any]) -> str:
    header = question.get("header")
    return header if isinstance(header, str) and header else question["question"]


def _options_text(question: Mapping[str, Any]) -> str:
    lines = [
        f"{o['label']}: {o['description']}"
        for o in question.get("options") or []
        if isinstance(o, Mapping) and isinstance(o.get("description"), str) and o["description"]
    ]
    return "\n".join([question["question"], *lines])


def build_form(questions: Sequence[Mapping[str, Any]]) -> HostForm:
    """The form for these questions (as the ask sent them, already valid)."""
    properties: dict[str, Any] = {}
    for i, q in enumerate(questions, 1):
        labels = _labels(q)
        field: dict[str, Any] = {"title": _field_title(q), "description": _options_text(q)}
        if not labels:
            field["type"] = "string"
        elif q.get("multiSelect"):
            field.update(type="array", items={"type": "string", "enum": labels})
        else:
            field.update(type="string", enum=labels)
        properties[f"q{i}"] = field
        if labels:
            properties[f"q{i}_other"] = {"type": "string", "title": "Other", "description": f"Your own answer to: {q['question']}"}
    if len(questions) == 1:
        message = questions[0]["question"]
    else:
        message = f"{len(questions)} questions:\n" + "\n".join(f"- {q['question']}" for q in questions)
    if len(message) > MAX_MESSAGE_CHARS:
        message = message[: MAX_MESSAGE_CHARS - 1] + "…"
    return HostForm(message, {"type": "object", "properties": properties}, tuple(questions))


APPROVE, DENY = "Approve", "Deny"


@dataclass(frozen=True)
class ApprovalForm:
    """An approval as a form: *Approve* / *Deny* and a reason."""

    message: str
    schema: dict[str, Any]

    def request(self) -> types.ElicitRequest:
        return types.ElicitRequest(params=types.ElicitRequestFormParams(message=self.message, requested_schema=self.schema))

    def decision(self, reply: types.ElicitResult | None) -> tuple[str, str | None] | None:
        """``("approve", None)``, ``("deny", reason)``, or None (dismissed,
        or nothing chosen). The host's own Decline button denies too."""
        if reply is None or reply.action == "cancel":
            return None
        content = reply.content or {}
        reason = _text(content.get("reason")) or None
        if reply.action == "decline":
            return "deny", reason
        choice = content.get("decision")
        if choice == APPROVE:
            return "approve", None
        if choice == DENY:
            return "deny", reason
        return None


def build_approval_form(action: Mapping[str, Any]) -> ApprovalForm:
    """The form for an action (as the ask sent it, already valid)."""
    parts = [f"Approve {action['name']}?"]
    if action.get("summary"):
        parts.append(str(action["summary"]))
    # Indented for people to read, not the codec's compact form.
    parts.append("Arguments:\n" + json.dumps(action.get("arguments", {}), indent=2, ensure_ascii=False))
    if action.get("preview"):
        parts.append(str(action["preview"]))
    message = "\n\n".join(parts)
    if len(message) > MAX_MESSAGE_CHARS:
        message = message[: MAX_MESSAGE_CHARS - 1] + "…"
    schema = {
        "type": "object",
        "properties": {
            "decision": {"type": "string", "title": "Decision", "enum": [APPROVE, DENY], "description": f"Run {action['name']} or not."},
            "reason": {"type": "string", "title": "Reason", "description": "Why you deny it (optional); the agent reads it."},
        },
        "required": ["decision"],
    }
    return ApprovalForm(message, schema)
