"""``askd hook``: Claude Code's and Codex's permission prompts asked
through askd (protocol section 18). The hook prints a decision or nothing:
anything but a decision leaves the agent's own dialog, and it never exits 2
(which both agents read as "deny")."""

from __future__ import annotations

from pathlib import Path

import typer

from askd.cli.clients import CaCertOption, TokenOption, UrlOption
from askd.cli.common import ConfigOption, eprint
from askd.cli.hook_event import AGENTS, Agent
from askd.cli.hook_install import DEFAULT_TIMEOUT, agent_timeout, codex_snippet, hook_command, install, settings_path, uninstall
from askd.cli.hook_run import TIMEOUT_TEXT, audience, decision, run_hook

__all__ = ["app", "audience", "decision", "run_hook"]

app = typer.Typer(help="Answer coding agents' permission prompts through askd.", no_args_is_help=True)

# Whatever the agent's command line holds, the hook never fails with a usage
# error (exit 2 is "deny" to the agents): unknown words are ignored.
LENIENT = {"ignore_unknown_options": True, "allow_extra_args": True}
ToOption = typer.Option([], "--to", help="Whom to ask: a user id or group:NAME; repeat or give a comma list (or ASKD_HOOK_TO).")
TimeoutOption = typer.Option(TIMEOUT_TEXT, "--timeout", help="Seconds before the question times out.")


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
