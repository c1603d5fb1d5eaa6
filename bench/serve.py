"""Run the ``askd`` command line, optionally on uvloop's event loop.

    python -m bench.serve [--uvloop] [--bare] serve --port 0 --admin-port 0

askd itself has no loop option; this lets the benchmark measure what
uvloop would bring without changing the daemon. ``--bare`` starts askd
without what its audit trail and receipts do per question (no records
sealed or written, no digest taken, no receipt signed): askd has no such
setting, and B2's and B4's ``unaudited`` case measures what they cost
against it. Bench only: a bare askd keeps no trail.
"""

from __future__ import annotations

import sys


def bare() -> None:
    """Patch out the trail's records, the ends' digests and the receipts."""
    from askd.audit.trail import MemoryTrail
    from askd.core.registry import deadlines, decisions
    from askd.server.http.receipting import Receipts
    from askd.store.sqlite.audit import SqliteTrail

    SqliteTrail.write = lambda self, db, taken, at: self._head  # type: ignore[method-assign]
    MemoryTrail.append = lambda self, taken, at: None  # type: ignore[method-assign]
    deadlines.ended_digest = decisions.ended_digest = lambda req, answers: None  # type: ignore[assignment]
    Receipts.receipt = lambda self, req: None  # type: ignore[method-assign]


def main() -> None:
    args = sys.argv[1:]
    if args[:1] == ["--uvloop"]:
        import asyncio

        import uvloop

        asyncio.set_event_loop_policy(uvloop.EventLoopPolicy())
        args = args[1:]
    if args[:1] == ["--bare"]:
        bare()
        args = args[1:]
    sys.argv = ["askd", *args]
    from askd.cli.main import main as askd_main

    askd_main()


if __name__ == "__main__":
    main()
