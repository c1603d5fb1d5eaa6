"""``askd hook claude-code`` / ``codex`` run: read the event, ask, wait,
print the decision (protocol section 18). No Typer here: every permission
prompt of both agents starts this command, so ``askd.cli.main`` runs it
directly when its command line has the shapes ``askd hook install`` writes
(``fast``), and through Typer (``askd.cli.hook``) otherwise, the same run."""

from __future__ import annotations

import json
import math
import os
import sys
from pathlib import Path
from typing import Any

from askd.cli.errors import debug_enabled, describe_error, eprint
from askd.cli.hook_ask import Approval, Target, ask_approval
from askd.cli.hook_event import AGENTS, Agent, BadEvent, Event, action, allow, deny, read_event, session_of
from askd.cli.hook_install import DEFAULT_TIMEOUT
from askd.client.results import Result, Status


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


# The options ``askd hook claude-code|codex`` takes, each with a value
# (askd.cli.hook declares them for Typer); the fast start reads ``--to X``.
TIMEOUT_TEXT = str(int(DEFAULT_TIMEOUT))  # --timeout's default, as Typer gives it
_VALUED = ("--to", "--timeout", "--url", "--token", "--cacert", "--config")


def fast(argv: list[str]) -> bool:
    """Run the hook when ``argv`` (the command line past ``askd``) is
    ``hook AGENT`` and pairs of the hook's own options, as ``askd hook
    install`` writes it; False (nothing done) for anything else, which
    Typer then parses: help, the root's options, ``--to=X``, a word the
    hook ignores, a path Typer would refuse (a directory)."""
    if len(argv) < 2 or argv[0] != "hook" or argv[1] not in AGENTS or len(argv) % 2:
        return False
    given: dict[str, list[str]] = {name: [] for name in _VALUED}
    for name, value in zip(argv[2::2], argv[3::2], strict=True):
        if name not in given or value.startswith("-"):
            return False
        given[name].append(value)
    paths = given["--cacert"] + given["--config"]
    if any(Path(p).is_dir() for p in paths):
        return False

    def last(name: str) -> str | None:
        return given[name][-1] if given[name] else None

    cacert, config = last("--cacert"), last("--config")
    run_hook(
        AGENTS[argv[1]], given["--to"], last("--timeout") or TIMEOUT_TEXT, last("--url"), last("--token"),
        Path(cacert) if cacert else None, Path(config) if config else None,
    )
    return True
