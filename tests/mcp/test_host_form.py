"""The questions as an elicitation form, and the form's reply as answers
(``askd.mcp.host``): no I/O."""

from __future__ import annotations

import pytest
from mcp import types
from mcp_types._v2025_11_25 import PrimitiveSchemaDefinition, RequestedSchema
from pydantic import TypeAdapter

from askd.mcp.host import build_form, declares_form, input_required_era
from tests.conftest import q

QUESTIONS = [
    q("Which database?", "PostgreSQL", "SQLite", header="Database"),
    q("Extras?", "tests", "docs", multi=True),
    q("Anything else?"),
]


def test_every_field_is_a_spec_primitive_schema() -> None:
    form = build_form(QUESTIONS)
    RequestedSchema.model_validate(form.schema)  # flat object of properties
    adapter: TypeAdapter[object] = TypeAdapter(PrimitiveSchemaDefinition)
    for prop in form.schema["properties"].values():
        adapter.validate_python(prop)
    assert list(form.schema["properties"]) == ["q1", "q1_other", "q2", "q2_other", "q3"]
    assert "required" not in form.schema  # any subset may be answered, as from a tab
    assert form.message.startswith("3 questions:")


def test_option_descriptions_reach_the_field_and_one_question_is_the_message() -> None:
    question = {"question": "Ship it?", "options": [{"label": "Yes", "description": "today"}, {"label": "No"}]}
    form = build_form([question])
    assert form.message == "Ship it?"
    assert form.schema["properties"]["q1"]["description"] == "Ship it?\nYes: today"
    assert form.schema["properties"]["q1"]["title"] == "Ship it?"


@pytest.mark.parametrize(
    ("content", "answers"),
    [
        ({"q1": "SQLite", "q2": ["docs"], "q3": " fine "}, {"Which database?": "SQLite", "Extras?": ["docs"], "Anything else?": "fine"}),
        ({"q1": "SQLite", "q1_other": "DuckDB"}, {"Which database?": "DuckDB"}),  # Other wins over the pick
        ({"q2": ["docs", "not an option"], "q2_other": "a changelog"}, {"Extras?": ["docs", "a changelog"]}),
        ({"q1": "", "q2": [], "q3": "   "}, {}),  # nothing usable
        ({"q9": "x", "q1": 3}, {}),  # unknown fields and wrong types are ignored
        (None, {}),
    ],
)
def test_answers_from_the_reply(content: dict[str, object] | None, answers: dict[str, object]) -> None:
    assert build_form(QUESTIONS).answers(content) == answers


def test_a_long_message_is_cut() -> None:
    form = build_form([q("x" * 5000)])
    assert len(form.message) == 2000 and form.message.endswith("…")


def test_which_hosts_take_forms() -> None:
    caps = types.ClientCapabilities
    assert declares_form(caps(elicitation=types.ElicitationCapability(form=types.FormElicitationCapability())))
    assert declares_form(caps(elicitation=types.ElicitationCapability()))  # {}: form, as before modes existed
    assert not declares_form(caps(elicitation=types.ElicitationCapability(url=types.UrlElicitationCapability())))
    assert not declares_form(caps()) and not declares_form(None)
    assert input_required_era("2026-07-28") and not input_required_era("2025-11-25")
