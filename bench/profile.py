"""Summarise a py-spy raw profile written by ``python -m bench ... --profile DIR``:
where askd's busy samples go, by area and by function.

    python -m bench.profile DIR/b1-5000x1x1.txt [--top 25]
"""

from __future__ import annotations

import argparse
import collections
from pathlib import Path

# An area is counted for a sample when one of its markers is in the stack.
AREAS = {
    "logging (structlog, redaction, access log)": ("structlog", "askd/server/logs.py", "access_log", "contextvars"),
    "token checks (PyJWT)": ("askd/tokens.py",),
    "frame parsing (pydantic)": ("parse_frame",),
    "body validation (pydantic)": ("json_body",),
    "registry (askd.core)": ("askd/core/",),
    "socket writes (kernel)": ("write_to_fd",),
    "socket reads (kernel)": ("read_from_fd",),
    "WebSocket upgrade (Tornado)": ("accept_connection",),
}


def summarise(path: Path, top: int = 25) -> str:
    areas: collections.Counter[str] = collections.Counter()
    own: collections.Counter[str] = collections.Counter()
    busy = 0
    for line in path.read_text().splitlines():
        stack, _, count = line.rpartition(" ")
        n = int(count)
        frames = stack.split(";")
        if "select (selectors" in frames[-1] or "uvloop" in frames[-1]:
            continue  # waiting for I/O
        busy += n
        own[frames[-1]] += n
        for area, markers in AREAS.items():
            if any(m in stack for m in markers):
                areas[area] += n
    out = [f"{busy} busy samples", "", "by area (a sample may count in several):"]
    out += [f"{100 * n / busy:5.1f}%  {a}" for a, n in areas.most_common()]
    out += ["", "by function (self time):"]
    out += [f"{100 * n / busy:5.1f}%  {f}" for f, n in own.most_common(top)]
    return "\n".join(out)


def main() -> None:
    ap = argparse.ArgumentParser(prog="python -m bench.profile")
    ap.add_argument("path", type=Path)
    ap.add_argument("--top", type=int, default=25)
    args = ap.parse_args()
    print(summarise(args.path, args.top))


if __name__ == "__main__":
    main()
