"""``askd hook``: Claude Code's and Codex's permission prompts asked
through askd (protocol section 18). The hook prints a decision or nothing:
anything but a decision leaves the agent's own dialog, and it never exits 2
(which both agents read as "deny")."""

from __future__ import annotations

import json
import math
import os
import sys
from pathlib import Path
from typing import Any

import typer

from askd.cli.clients import CaCertOption, TokenOption, UrlOption, describe_error
from askd.cli.common import ConfigOption, debug_enabled, eprint
from askd.cli.hook_ask import Approval, Target, ask_approval
from askd.cli.hook_event import AGENTS, Agent, BadEvent, Event, action, allow, deny, read_event, session_of
from askd.cli.hook_install import DEFAULT_TIMEOUT, agent_timeout, codex_snippet, hook_command, install, settings_path, uninstall
from askd.client import Result, Status

app = typer.Typer(help="Answer coding agents' permission prompts through askd.", no_args_is_help=True)

# Whatever the agent's command line holds, the hook never fails with a usage
# error (exit 2 is "deny" to the agents): unknown words are ignored.
LENIENT = {"ignore_unknown_options": True, "allow_extra_args": True}
ToOption = typer.Option([], "--to", help="Whom to ask: a user id or group:NAME; repeat or give a comma list (or ASKD_HOOK_TO).")
TimeoutOption = typer.Option(str(int(DEFAULT_TIMEOUT)), "--timeout", help="Seconds before the question times out.")


def audience(to: list[str]) -> list[str]:
    given = to or [os.environ.get("ASKD_HOOK_TO", "")]
    return [w.strip() for entry in given for w in entry.split(",") if w.strip()]


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not 0 < value < math.inf:
        raise BadEvent(f"--timeout {text!r}: expected a number of seconds")
    return value


def _emit(obj: dict[str, Any]) -> None:
    # ASCII escapes: the hook's stdout may not be UTF-8 (a C locale), and the
    # agent reads this line as it always has.
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def decision(agent: Agent, event: Event, result: Result) -> dict[str, Any] | None:
    """The agent's decision JSON, or None (with the line saying why) when
    askd has none: the agent then shows its own dialog."""
    if result.status is Status.answered and result.approved is True:
        return allow(agent, event, result.scope)
    if result.status is Status.declined:
        return deny(result.answered_by, result.reason)
    if result.status is Status.timeout:
        eprint(f"askd hook: no answer in time ({result.error or 'timed out'}); {agent.label} asks instead")
    else:
        why = result.error or result.status
        eprint(f"askd hook: the question was withdrawn or cancelled ({why}); {agent.label} asks instead")
    return None


def run_hook(
    agent: Agent, to: list[str], timeout: str, url: str | None, token: str | None, cacert: Path | None, config: Path | None
) -> None:
    try:
        event = read_event(sys.stdin.read())
        if event is None:
            return  # another event: not ours to answer
        whom = audience(to)
        if not whom:
            raise BadEvent("nobody to ask: give --to USER or set ASKD_HOOK_TO")
        approval = Approval(session_of(agent, event), action(agent, event), whom, _seconds(timeout))
        result = ask_approval(Target.find(url, token, config, cacert), approval)
    except BadEvent as err:
        eprint(f"askd hook: {err}; {agent.label} asks instead")
        return
    except Exception as err:  # askd down, a refused token, a refused ask: never a decision
        if debug_enabled():
            import traceback

            traceback.print_exc()
        eprint(f"askd hook: {describe_error(err)[0]}; {agent.label} asks instead")
        return
    if result is None:
        eprint(f"askd hook: ended by {agent.label}; the question was withdrawn")
        return
    out = decision(agent, event, result)
    if out is not None:
        _emit(out)


def _hook_for(agent: Agent) -> None:
    """``askd hook claude-code`` and ``askd hook codex``: one command per agent."""

    def hook(
        to: list[str] = ToOption,
        timeout: str = TimeoutOption,
        url: str | None = UrlOption,
        token: str | None = TokenOption,
        cacert: Path | None = CaCertOption,
        config: Path | None = ConfigOption,
    ) -> None:
        run_hook(agent, to, timeout, url, token, cacert, config)

    hook.__doc__ = f"{agent.label}'s PermissionRequest hook: reads the event on stdin, prints the decision (or nothing)."
    app.command(agent.key, context_settings=LENIENT)(hook)


for _agent_now in AGENTS.values():
    _hook_for(_agent_now)


def _agent(name: str, allowed: tuple[str, ...]) -> str:
    if name not in allowed:
        eprint(f"askd: unknown agent {name!r}: expected {' or '.join(allowed)}")
        raise typer.Exit(2)
    return name


@app.command("install")
def install_hook(
    agent: str = typer.Argument(..., help="claude-code or codex."),
    to: list[str] = typer.Option([], "--to", help="Whom to ask: a user id or group:NAME; repeat or give a comma list."),
    scope: str = typer.Option("user", "--scope", help="claude-code: user (~/.claude) or project (./.claude)."),
    timeout: float = typer.Option(DEFAULT_TIMEOUT, "--timeout", min=1, help="Seconds before askd's question times out."),
) -> None:
    """Put askd's hook in Claude Code's settings, or print Codex's snippet."""
    _agent(agent, ("claude-code", "codex"))
    whom = audience(to)
    if not whom:
        eprint("askd: give --to USER|group:NAME (whom to ask)")
        raise typer.Exit(2)
    command = hook_command(agent, whom, timeout)
    if agent == "codex":
        typer.echo(codex_snippet(command, agent_timeout(timeout)), nl=False)
        return
    path = settings_path(scope)
    changed = install(path, command, agent_timeout(timeout))
    typer.echo(f"{'Installed' if changed else 'Already installed'}: askd's PermissionRequest hook in {path}")


@app.command("uninstall")
def uninstall_hook(
    agent: str = typer.Argument(..., help="claude-code."),
    scope: str = typer.Option("user", "--scope", help="user (~/.claude) or project (./.claude)."),
) -> None:
    """Remove askd's hook (and nothing else) from Claude Code's settings."""
    _agent(agent, ("claude-code",))
    path = settings_path(scope)
    changed = uninstall(path)
    typer.echo(f"{'Removed' if changed else 'Not installed'}: askd's PermissionRequest hook in {path}")
