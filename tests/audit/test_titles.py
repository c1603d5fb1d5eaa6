"""The history's titles (protocol section 19, ``GET /v1/me/history``'s
``header``): what a question is called, taken when it is asked, kept by
the history index and never by the hash-chained records."""

from __future__ import annotations

import itertools
from typing import Any

from askd.audit.history import TITLE_CHARS, MemoryHistory, title_of, titles
from askd.audit.trail import MemoryTrail
from askd.core import AskInput, Limits, NotifyPolicy
from askd.core.changes import Change
from tests.core.test_registry import FakeClock
from tests.support.registry_steps import StepRegistry

LONG = "Should we " + "really " * 60 + "deploy?"


def test_a_header_is_the_title_else_the_plain_text_of_the_first_question() -> None:
    assert title_of({"questions": [{"question": "Deploy **api**?", "header": "Deploy"}, {"question": "B?"}]}) == "Deploy"
    assert title_of({"questions": [{"question": "Deploy **api** `1.42` to [prod](https://x.example)?"}]}) == (
        "Deploy api 1.42 to prod?"
    )
    # a header is plain text already: its spaces and lines collapsed, never parsed as Markdown
    assert title_of({"questions": [{"question": "x", "header": "  Ship\n **it**  "}]}) == "Ship **it**"
    # the first sentence of the first paragraph, as a mail's Subject (askd.web.markdown.plain)
    assert title_of({"questions": [{"question": "# Release\n\nShip it now. Then tell ops."}]}) == "Release"
    assert title_of({"questions": [{"question": "```\nrm -rf build\n```"}]}) == "``` rm -rf build ```"
    assert title_of({"questions": [{"question": "", "header": "  "}]}) is None


def test_a_long_text_is_cut_with_an_ellipsis() -> None:
    for payload in ({"questions": [{"question": LONG}]}, {"questions": [{"question": "x", "header": LONG}]}):
        title = title_of(payload)
        assert title is not None and TITLE_CHARS - 8 <= len(title) <= TITLE_CHARS and title.endswith("…")
        assert title.startswith("Should we really really")


def test_an_action_is_called_by_its_summary_else_its_name() -> None:
    assert title_of({"action": {"name": "deploy", "summary": "Deploy **api** to prod"}}) == "Deploy api to prod"
    assert title_of({"action": {"name": "deploy"}}) == "deploy"


def registry(clock: FakeClock) -> StepRegistry:
    ids = itertools.count(1)
    return StepRegistry(Limits(question_timeout=900), clock=clock, new_id=lambda: f"r{next(ids)}", notify=NotifyPolicy())


def life(trail: MemoryTrail) -> list[Change]:
    """An ask with a header answered, one without declined, one timed out:
    each change appended to ``trail`` before it is applied, as a store
    commits it (the first four at one instant, the rest a second later)."""
    clock = FakeClock()
    reg, out = registry(clock), []

    def commit(change: Change | None) -> None:
        assert change is not None
        trail.append([change], 1_800_000_000.0 if len(out) < 4 else 1_800_000_001.0)
        reg.apply(change)
        out.append(change)

    for sid, qs in (("s1", [{"question": "Deploy?", "header": "Deploy"}]), ("s2", [{"question": "Drop **db**?"}])):
        commit(reg.prepare_ask(AskInput(sid, "alice", qs))[1])
    commit(reg.prepare_answer("s1", "r1", {"Deploy?": "yes"}, user_id="alice", via="ws"))
    commit(reg.prepare_decline("s2", "r2", "alice", via="ws"))
    _, asked = reg.prepare_ask(AskInput("s3", "alice", [{"question": "Soon?"}], timeout=60))
    assert asked is not None and titles([asked]) == {("s3", "r3"): "Soon?"}
    commit(asked)
    clock.advance(61)
    for change in reg.due():
        commit(change)
    return out


def test_the_index_keeps_each_title_and_the_records_hold_none() -> None:
    trail = MemoryTrail()
    life(trail)
    records = trail._records
    assert [r["event"] for r in records] == ["asked", "asked", "answered", "declined", "asked", "timeout"]
    # The records are as they were before titles (section 19 lists their fields): no text, same hashes.
    assert all(set(r) == {"seq", "at", "event", "sessionId", "requestId", "by", "via", "data", "prev", "hash"} for r in records)
    assert not any(word in repr(records) for word in ("Deploy", "Drop", "Soon"))
    assert [r["hash"][:16] for r in records] == HASHES


async def test_memory_history_keeps_titles_and_drops_them_with_the_records() -> None:
    trail = MemoryTrail()
    life(trail)
    got = [(e.record["requestId"], e.record["event"], e.title) for e in await trail.history("alice")]
    assert got == [("r3", "timeout", "Soon?"), ("r2", "declined", "Drop db?"), ("r1", "answered", "Deploy")]
    assert await trail.prune("2027-01-15T08:00:00.500Z") == 4
    assert [e.title for e in await trail.history("alice")] == ["Soon?"]
    assert all(e.record["seq"] >= 5 for ends in trail._history._ends.values() for e in ends)


def test_an_end_with_no_title_kept_has_none() -> None:
    """A question asked before the index kept titles (or not seen asked)."""
    index = MemoryHistory()
    rec: dict[str, Any] = {"seq": 1, "event": "asked", "sessionId": "s", "requestId": "r", "data": {"audience": ["a"]}}
    index.add([rec, {**rec, "seq": 2, "event": "answered", "data": {}}], {})
    [ended] = index.of("a", 1)
    assert (ended.record["seq"], ended.title) == (2, None)


# The first 16 hex digits of each record's hash, as main computed them before titles were kept.
HASHES = ["d3e976654cb3f8b6", "d25c151fd88d7cfa", "c3f69c77164e07b4", "0260d7d73a34829e", "5428509dab946057", "378f80d5851e1144"]
