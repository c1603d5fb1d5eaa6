"""The ``askd`` command: wires the command groups together, nothing more."""

from __future__ import annotations

import sys
import traceback

import typer

from askd import __version__
from askd.cli import serve, token
from askd.cli.common import CliError, debug_enabled, eprint

app = typer.Typer(
    name="askd",
    help="askd: let AI agents ask a human a question and wait for the answer.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"askd {__version__}")
        raise typer.Exit()


@app.callback()
def root(
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True, help="Print the version and exit."),
    debug: bool = typer.Option(False, "--debug", help="Show tracebacks on errors (or set ASKD_DEBUG=1)."),
) -> None:
    if debug:
        import os

        os.environ["ASKD_DEBUG"] = "1"


app.command("serve")(serve.serve)
app.add_typer(token.app, name="token")


def main() -> None:
    try:
        app(standalone_mode=False)
    except CliError as err:
        if debug_enabled():
            traceback.print_exc()
        eprint(f"askd: {err}")
        sys.exit(err.code)
    except typer.Exit as err:
        sys.exit(err.exit_code)
    except typer.Abort:
        eprint("askd: aborted")
        sys.exit(1)
    except Exception as err:  # click usage errors and everything unexpected
        import click

        if isinstance(err, click.ClickException):
            err.show()
            sys.exit(err.exit_code)
        if debug_enabled():
            traceback.print_exc()
        eprint(f"askd: {type(err).__name__}: {err}")
        sys.exit(1)


if __name__ == "__main__":
    main()
