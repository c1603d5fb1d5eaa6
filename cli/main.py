"""The ``askd`` command: its entry point (``askd.cli.main:main``).

``askd --version`` and ``askd hook claude-code|codex`` (every permission
prompt of both agents starts one) are run without loading Typer or any
other command; every other command line goes to the Typer app
(``askd.cli.root``), which imports only the command that runs
(docs/performance.md, "The command's start")."""

from __future__ import annotations

import sys
import traceback
from typing import Any

# httpx's package imports its own command line (httpx._main, which loads
# rich, click and pygments: some 40 ms of every start) whenever those are
# installed, as Typer installs them; askd never runs httpx's command line.
# None here makes that import fail as it does where they are missing, which
# httpx's __init__ catches (its ``httpx.main`` is then a stub saying so).
sys.modules.setdefault("httpx._main", None)  # type: ignore[assignment]

from askd.cli.errors import CliError, debug_enabled, eprint  # noqa: E402 (after the line above)


def main() -> None:
    try:
        argv = sys.argv[1:]
        if argv == ["--version"]:
            from askd import __version__

            print(f"askd {__version__}")  # as the root's --version prints it
            return
        if argv[:1] == ["hook"]:
            from askd.cli.hook_run import fast

            if fast(argv):
                return
        from askd.cli.root import app

        # Standalone mode: click prints usage errors (exit 2) and exits with
        # each command's typer.Exit code; everything else comes out here.
        app()
    except CliError as err:
        if debug_enabled():
            traceback.print_exc()
        eprint(f"askd: {err}")
        sys.exit(err.code)
    except Exception as err:  # everything unexpected: one line, no traceback
        if debug_enabled():
            traceback.print_exc()
        eprint(f"askd: {type(err).__name__}: {err}")
        sys.exit(1)


def __getattr__(name: str) -> Any:
    # ``from askd.cli.main import app`` (tests, tools) as before the app moved.
    if name == "app":
        from askd.cli.root import app

        return app
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


if __name__ == "__main__":
    main()
