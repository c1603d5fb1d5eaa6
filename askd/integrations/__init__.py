"""askd as the approval backend of agent frameworks (protocol section 21).

Each framework has its own module, loaded only when imported, with an
optional extra that installs the framework (``askd[pydantic-ai]``,
``askd[openai-agents]``, ...). What every adapter shares lives in
:mod:`askd.integrations.calls`: the action made from a tool call, the
``Idempotency-Key`` that makes one call one question, asking inline or
deferred, the decision as one typed value, and the receipt checked before
a call runs. This package imports no framework, and reaches askd only
through :mod:`askd.client`.
"""

from askd.integrations.calls import (
    Approved,
    ApprovalGate,
    AsyncApprovalGate,
    Decision,
    Denied,
    GateOptions,
    Outcome,
    Pending,
    ToolCall,
    call_key,
)

__all__ = [
    "Approved",
    "ApprovalGate",
    "AsyncApprovalGate",
    "Decision",
    "Denied",
    "GateOptions",
    "Outcome",
    "Pending",
    "ToolCall",
    "call_key",
]
