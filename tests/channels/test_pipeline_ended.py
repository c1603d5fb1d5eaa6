"""``Pipeline.ended``: each question that ended on this node reaches every
channel as an ``ENDED`` notice (what Slack edits its messages on); none
without channels."""

from __future__ import annotations

from askd.channels.channel import ENDED, Notice
from askd.channels.pipeline import Pipeline
from askd.channels.sample import sample_request
from askd.core.registry import Registry


def test_each_end_is_an_ended_notice() -> None:
    got: list[Notice] = []
    pipeline = Pipeline(Registry(), online_elsewhere=lambda *u: None, defer=lambda c: None, spawn=lambda f: None)  # type: ignore[arg-type, return-value]
    one, two = sample_request("alice", 60), sample_request("bob", 60)
    pipeline.ended([one])  # no channel yet: nothing, and no error
    pipeline.sink = got.append
    pipeline.ended([one, two])
    assert [(n.kind, n.req, n.users, n.newcomers) for n in got] == [(ENDED, one, [], []), (ENDED, two, [], [])]
