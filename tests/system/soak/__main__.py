"""``python -m tests.system.soak [--seconds 600] [--users 200] [--tabs 3] [--agents 120] [--seed 1] [--nodes 1]``
``python -m tests.system.soak --crash [--seconds 180] [--users 20] [--tabs 2] [--agents 10] [--seed 1]``

Runs the chaos soak (or, with ``--crash``, the crash soak: ``kill -9``
every 2 to 4 s) against a fresh ``askd serve`` subprocess on 127.0.0.1
(with ``--nodes N``, N of them on one fresh redis-server), prints the
figures and exits 1 if anything was lost or duplicated."""

from __future__ import annotations

import argparse
import asyncio
import sys

from tests.system.soak.chaos import TabRecords, report, soak
from tests.system.soak.crash import crash_report, crash_soak


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.system.soak", description=__doc__)
    parser.add_argument("--crash", action="store_true", help="the crash soak: kill -9 askd again and again under load")
    parser.add_argument("--seconds", type=float, default=None, help="how long the load runs (default 600; 180 with --crash)")
    parser.add_argument("--users", type=int, default=None, help="default 200 (20 with --crash)")
    parser.add_argument("--tabs", type=int, default=None, help="tabs per user: default 3 (2 with --crash)")
    parser.add_argument("--agents", type=int, default=None, help="default 120 (10 with --crash)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--nodes", type=int, default=1, help="askd nodes on one Redis (the chaos soak only)")
    args = parser.parse_args()
    if args.crash and args.nodes != 1:
        parser.error("--nodes is for the chaos soak, not --crash")
    crash = args.crash
    seconds = args.seconds or (180 if crash else 600)
    users, tabs, agents = args.users or (20 if crash else 200), args.tabs or (2 if crash else 3), args.agents or (10 if crash else 120)
    ledger: TabRecords
    if crash:
        ledger, errors, code = asyncio.run(crash_soak(seconds, users, tabs, agents, args.seed))
        print(crash_report(ledger, seconds))
    else:
        ledger, errors, code = asyncio.run(soak(seconds, users, tabs, agents, args.seed, args.nodes))
        print(report(ledger, seconds, users, tabs, args.nodes))
    for line in ledger.problems[:20] + errors[:20]:
        print("  !", line)
    print(f"  daemon exit code: {code}, error log lines: {len(errors)}")
    ok = not ledger.problems and not errors and code == 0 and ledger.figures["lost"] == 0 and ledger.figures["duplicated"] == 0
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
