"""Run the ``askd`` command line, optionally on uvloop's event loop.

    python -m bench.serve [--uvloop] serve --port 0 --admin-port 0

askd itself has no loop option; this lets the benchmark measure what
uvloop would bring without changing the daemon.
"""

from __future__ import annotations

import sys


def main() -> None:
    args = sys.argv[1:]
    if args[:1] == ["--uvloop"]:
        import asyncio

        import uvloop

        asyncio.set_event_loop_policy(uvloop.EventLoopPolicy())
        args = args[1:]
    sys.argv = ["askd", *args]
    from askd.cli.main import main as askd_main

    askd_main()


if __name__ == "__main__":
    main()
