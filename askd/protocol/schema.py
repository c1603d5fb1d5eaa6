"""The JSON Schema of askd's wire: the frames each side of ``/ws`` sends
(``frames.py``, ``event_models.py``), the agent API's bodies and results
(``models.py``). ``askd schema`` prints it, and the
JavaScript client's types are generated from it (clients/js), so the models
here stay the one definition."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel
from pydantic.json_schema import GenerateJsonSchema, models_json_schema

from askd.core import event_models, frames, models

# In the order a reader meets them: what a tab sends, what it gets, what an agent sends and gets.
MODELS: tuple[type[BaseModel], ...] = (
    frames.Subscribe,
    frames.Unsubscribe,
    frames.AnswerFrame,
    frames.ExtendFrame,
    frames.DeclineFrame,
    frames.Ping,
    event_models.ServerEvent,
    models.AskBody,
    models.PendingBody,
    models.QuestionResult,
    models.PendingQuestion,
    models.ExtendBody,
    models.AnswerBody,
    models.ErrorBody,
)


class _ModelTitlesOnly(GenerateJsonSchema):
    # A field's title ("Sessionid") would become a type of its own in the
    # generated TypeScript; the models' titles are the names worth keeping.
    def field_title_should_be_set(self, schema: Any) -> bool:
        return False


def protocol_schema() -> dict[str, Any]:
    """One JSON Schema document whose ``$defs`` name every model above."""
    _, schema = models_json_schema(
        [(m, "validation") for m in MODELS], title="askd", schema_generator=_ModelTitlesOnly
    )
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", **schema}
