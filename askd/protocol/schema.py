"""The JSON Schema of askd's wire: the frames each side of ``/ws`` sends
(``frames.py``, ``events.py``), the agent API's bodies (``models.py``), its
results (``results.py``) and a person's history (``history.py``). ``askd schema`` prints it, and the
JavaScript client's types are generated from it (clients/js), so the shapes
here stay the one definition."""

from __future__ import annotations

from typing import Any

from pydantic import TypeAdapter
from pydantic.json_schema import GenerateJsonSchema

from askd.protocol import action, events, frames, history, models, results

# In the order a reader meets them: what a tab sends, what it gets, what an agent sends and gets.
# Models (what the daemon validates) and TypedDicts (what it sends) alike.
MODELS: tuple[Any, ...] = (
    frames.Subscribe,
    frames.Unsubscribe,
    frames.AnswerFrame,
    frames.ExtendFrame,
    frames.DeclineFrame,
    frames.ApproveFrame,
    frames.Ping,
    events.ServerEvent,
    models.AskBody,
    results.PendingBody,
    results.QuestionResult,
    results.PendingQuestion,
    models.ExtendBody,
    models.AnswerBody,
    action.ApproveBody,
    results.ErrorBody,
    history.HistoryBody,
)


class _ModelTitlesOnly(GenerateJsonSchema):
    # A field's title ("Sessionid") would become a type of its own in the
    # generated TypeScript; the models' titles are the names worth keeping.
    def field_title_should_be_set(self, schema: Any) -> bool:
        return False


def protocol_schema() -> dict[str, Any]:
    """One JSON Schema document whose ``$defs`` name every model above."""
    _, schema = TypeAdapter.json_schemas(
        [(m, "validation", TypeAdapter(m)) for m in MODELS], title="askd", schema_generator=_ModelTitlesOnly
    )
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", **schema}
