"""``python -m tests.soak [--seconds 600] [--users 200] [--tabs 3] [--agents 120] [--seed 1]``

Runs the chaos soak against a fresh ``askd serve`` subprocess on 127.0.0.1,
prints the figures and exits 1 if anything was lost or duplicated."""

from __future__ import annotations

import argparse
import asyncio
import sys

from tests.soak.chaos import soak, report


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.soak", description=__doc__)
    parser.add_argument("--seconds", type=float, default=600)
    parser.add_argument("--users", type=int, default=200)
    parser.add_argument("--tabs", type=int, default=3)
    parser.add_argument("--agents", type=int, default=120)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    ledger, errors, code = asyncio.run(soak(args.seconds, args.users, args.tabs, args.agents, args.seed))
    print(report(ledger, args.seconds, args.users, args.tabs))
    for line in ledger.problems[:20] + errors[:20]:
        print("  !", line)
    print(f"  daemon exit code: {code}, error log lines: {len(errors)}")
    ok = not ledger.problems and not errors and code == 0 and ledger.figures["lost"] == 0 and ledger.figures["duplicated"] == 0
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
