"""An approval's own record (protocol section 17): its quorum, the approvals
given so far, and once it ends, what was approved.

A question asked with ``action`` holds an :class:`Approval`
(``Request.approval``; None for questions). Every store keeps it as one JSON
object (:meth:`Approval.to_json`) beside the count of approvals its guards
compare (``rules.py``: an approval takes effect only against the count it
was decided with).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from askd.core.events import isotime
from askd.protocol import codec

if TYPE_CHECKING:
    from askd.protocol.action import Scope
    from askd.protocol.results import ApprovalGiven
    from askd.protocol.status import Via


@dataclass(slots=True, frozen=True)
class Vote:
    """One approval: who (None: it names nobody, an admin without a ``sub``
    or a shared link, which only a quorum of 1 takes), how, when, and the
    scope they chose."""

    by: str | None
    via: Via
    at: float
    scope: Scope = "once"

    def wire(self) -> ApprovalGiven:
        return {"by": self.by, "via": self.via, "at": isotime(self.at)}


@dataclass(slots=True, frozen=True)
class Approval:
    """An action's approvals. ``arguments`` are those asked until it ends
    approved, then the final ones (edited or as asked); ``scope`` is set
    only when approved."""

    quorum: int
    arguments: Any
    votes: tuple[Vote, ...] = ()
    edited: bool = False
    scope: Scope | None = None

    def voted(self, by: str | None) -> bool:
        """Whether ``by`` approved it already."""
        return any(v.by == by for v in self.votes)

    def wire(self) -> list[ApprovalGiven]:
        """``approvals`` as the wire shows them: ``[{"by","via","at"}]``."""
        return [v.wire() for v in self.votes]

    def with_vote(self, vote: Vote) -> Approval:
        return replace(self, votes=(*self.votes, vote))

    def approved(self, vote: Vote, arguments: Any, edited: bool) -> Approval:
        """The final record with ``vote`` completing the quorum: the scope
        is ``always`` only when every approval chose it."""
        votes = (*self.votes, vote)
        scope: Scope = "always" if all(v.scope == "always" for v in votes) else "once"
        return Approval(self.quorum, arguments, votes, edited, scope)

    def to_json(self) -> bytes:
        """As stores keep it."""
        votes = [[v.by, v.via, v.at, v.scope] for v in self.votes]
        return codec.dumps(
            {"quorum": self.quorum, "arguments": self.arguments, "votes": votes, "edited": self.edited, "scope": self.scope}
        )

    @classmethod
    def from_json(cls, data: bytes | str) -> Approval:
        obj = codec.loads(data)
        votes = tuple(Vote(by, via, float(at), scope) for by, via, at, scope in obj["votes"])
        return cls(int(obj["quorum"]), obj["arguments"], votes, bool(obj["edited"]), obj["scope"])
