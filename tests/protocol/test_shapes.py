"""What the core builds as plain dicts fits the wire's one definition of
it (askd.protocol.results, askd.protocol.events), key for key: every key it
sends is declared there, and every value parses, so ``askd schema``, the
JavaScript types and the Python client describe what the daemon sends."""

from __future__ import annotations

from typing import Any, get_args, get_origin, get_type_hints

from typing_extensions import is_typeddict

from askd.protocol import codec
from askd.protocol.events import EVENT_TYPES
from askd.protocol.parse import parse
from askd.protocol.results import PendingQuestion, QuestionResult
from tests.support.registry_steps import StepRegistry

QUESTIONS = [{"question": "Deploy?", "options": [{"label": "yes"}, {"label": "no"}]}]


def undeclared(shape: Any, data: Any, where: str = "") -> list[str]:
    """Keys of ``data`` that ``shape`` (a TypedDict, nested) does not declare."""
    if not is_typeddict(shape) or not isinstance(data, dict):
        return []
    hints = get_type_hints(shape)
    out = [f"{where}{key}" for key in data if key not in hints]
    for key, value in data.items():
        if key in hints:
            inner = [hints[key], *get_args(hints[key])] if get_origin(hints[key]) is not None else [hints[key]]
            for candidate in inner:
                out += undeclared(candidate, value, f"{where}{key}.")
    return out


def fits(shape: Any, data: Any) -> None:
    parse(shape, data)
    assert undeclared(shape, data) == [], f"{shape.__name__} does not declare {undeclared(shape, data)}"


class Clock:
    def __init__(self) -> None:
        self.now = 1_800_000_000.0

    def __call__(self) -> float:
        return self.now


def frames_sent(reg: StepRegistry) -> list[dict[str, Any]]:
    return [codec.loads(send.event.frame) for send in reg.drain().sends]


def test_every_result_and_event_fits_its_shape() -> None:
    clock = Clock()
    reg = StepRegistry(clock=clock)
    reg.connect("tab", "alice")
    reg.subscribe("tab", "*", reply_id="sub-1")
    reg.apply(reg.prepare_group_set("ops", ["bob"]))
    sent: list[dict[str, Any]] = []
    results: list[dict[str, Any]] = []

    # one user: answered; a team with a step and an allowance: extended, escalated, declined
    answered, _ = reg.ask("s1", "alice", QUESTIONS)
    fits(PendingQuestion, answered.describe())
    results.append(answered.result())
    reg.answer("s1", answered.request_id, {"Deploy?": "yes"}, user_id="alice")
    results.append(answered.result())
    team, _ = reg.ask("s2", "alice", QUESTIONS, to=("alice", "group:ops"), escalate=((30.0, ("carol",)),), max_extension=60.0)
    fits(PendingQuestion, team.describe())
    results.append(team.result())
    reg.apply(reg.prepare_extend("s2", team.request_id, 10, user_id="alice"))
    clock.now += 31
    reg.advance()
    reg.apply(reg.prepare_decline("s2", team.request_id, "not mine", user_id="alice"))
    results.append(team.result())
    # a timeout with a default, and a withdraw
    defaulted, _ = reg.ask("s3", "alice", QUESTIONS, timeout=5, on_timeout={"Deploy?": "no"})
    withdrawn, _ = reg.ask("s3", "alice", QUESTIONS)
    reg.withdraw("s3", withdrawn.request_id)
    clock.now += 6
    reg.advance()
    results += [defaulted.result(), withdrawn.result()]
    # an action with a quorum of two (section 17): one approval, then the second ends it; one denied
    action = {"name": "deploy", "arguments": {"env": "prod"}, "summary": "Ship **it**", "allowAlways": True}
    approval, _ = reg.ask("s4", "alice", None, to=("alice", "bob"), action=action, quorum=2)
    fits(PendingQuestion, approval.describe())
    reg.apply(reg.prepare_approve("s4", approval.request_id, user_id="alice", scope="always"))
    results.append(approval.result())
    reg.apply(reg.prepare_approve("s4", approval.request_id, user_id="bob"))
    denied, _ = reg.ask("s5", "alice", None, action=action)
    reg.apply(reg.prepare_decline("s5", denied.request_id, "not today", user_id="alice"))
    results += [approval.result(), denied.result()]
    sent += frames_sent(reg)
    reg.subscribe("tab", "s3", reply_id=7)
    sent += frames_sent(reg)

    for result in results:
        fits(QuestionResult, result)
    kinds = {frame["type"] for frame in sent}
    assert set(EVENT_TYPES) - {"ack", "error", "pong"} <= kinds  # those three the daemon builds, not the core
    for frame in sent:
        fits(EVENT_TYPES[frame["type"]], frame)
    statuses = {r["status"] for r in results}
    assert statuses == {"pending", "answered", "declined", "timeout", "cancelled"}
