"""Write ``packaging/askd.toml``, the commented example configuration, from
the settings model itself, so that it never drifts from it.

    python packaging/gen_config.py            # (re)write packaging/askd.toml
    python packaging/gen_config.py --check    # exit 1 when it is out of date
    python packaging/gen_config.py -o FILE    # write elsewhere ("-": stdout)

Every setting appears with its description, its environment variable, its
bounds and its default. Settings whose default cannot be written in TOML
(none), is machine-dependent (``state_dir``) or is a secret stay commented
out, so that loading the file as it is gives exactly the defaults.
"""

from __future__ import annotations

import argparse
import json
import sys
import textwrap
import typing
from pathlib import Path
from typing import Any

import annotated_types
from pydantic import BaseModel, SecretStr
from pydantic.fields import FieldInfo

from askd.config.settings import Settings, env_name

EXAMPLE = Path(__file__).resolve().parent / "askd.toml"

HEADER = """\
# askd configuration: every setting, with its default.
#
# GENERATED from the settings model (askd.config.Settings) by
# packaging/gen_config.py; do not edit by hand, run `make config-example`.
#
# Use it with `askd serve --config FILE` (or ASKD_CONFIG=FILE); the systemd
# unit reads /etc/askd/askd.toml. Priority, highest first: command-line
# flags, environment variables (shown with each setting), this file, the
# defaults. Loading this file unchanged gives the defaults.
"""

# Defaults that depend on the machine: printed commented out, with a note.
MACHINE_DEFAULTS = {
    "state_dir": (
        "Default: the platform's user state directory ($XDG_STATE_HOME/askd, else "
        "~/.local/state/askd); the systemd unit sets ASKD_STATE_DIR=/var/lib/askd.",
        "/var/lib/askd",
    ),
}
# An example value for settings whose default is "unset".
UNSET_EXAMPLES: dict[str, Any] = {
    "auth.secret": "at-least-32-characters-of-random-text",
    "log.format": "json",
    "node_id": "askd-1",
    "public_url": "https://tools.example.com/askd/",
    "tls.cert_file": "/etc/askd/tls/cert.pem",
    "tls.key_file": "/etc/askd/tls/key.pem",
    "notify.webhook_url": "https://hooks.example.com/askd",
    "notify.webhook_secret": "a-long-random-string-shared-with-the-receiver",
    "notify.smtp_url": "smtp://askd:PASSWORD@mail.example.com:587",
    "notify.email_from": "askd <askd@example.com>",
    "notify.remind_every_seconds": 3600,
    "notify.slack_bot_token": "xoxb-0000-0000-XXXXXXXXXXXXXXXX",
    "notify.slack_channel": "C0123456789",
    "receipts.key_file": "/etc/askd/receipts/key.pem",
}


def toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, (str, Path)):
        return json.dumps(str(value))  # a TOML basic string for these values
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    raise TypeError(f"no TOML form for {value!r}")


def _choices(annotation: Any) -> list[Any]:
    """The allowed values of a Literal (or Optional Literal) field."""
    if typing.get_origin(annotation) is typing.Literal:
        return list(typing.get_args(annotation))
    out: list[Any] = []
    for arg in typing.get_args(annotation):
        out.extend(_choices(arg))
    return out


def _bounds(info: FieldInfo) -> str:
    signs = {annotated_types.Ge: ">=", annotated_types.Gt: ">", annotated_types.Le: "<=", annotated_types.Lt: "<"}
    parts = []
    for m in info.metadata:
        if type(m) in signs:
            limit = getattr(m, type(m).__name__.lower())  # Ge(ge=0).ge
            parts.append(f"{signs[type(m)]} {limit}")
    return ", ".join(parts)


def _comment(text: str) -> list[str]:
    return ["# " + line for line in textwrap.wrap(text, 76)]


def _is_section(info: FieldInfo) -> bool:
    return isinstance(info.annotation, type) and issubclass(info.annotation, BaseModel)


def _setting(path: tuple[str, ...], info: FieldInfo) -> list[str]:
    name = path[-1]
    dotted = ".".join(path)
    lines = []
    if info.description:
        lines += _comment(info.description)
    notes = ["env " + env_name(path)]
    if choices := _choices(info.annotation):
        notes.append("one of " + ", ".join(str(c) for c in choices))
    if bounds := _bounds(info):
        notes.append(bounds)
    lines += _comment("; ".join(notes))
    if dotted in MACHINE_DEFAULTS:
        note, example = MACHINE_DEFAULTS[dotted]
        lines += [*_comment(note), f"# {name} = {toml_value(example)}"]
        return lines
    default = info.get_default(call_default_factory=True)
    if default is None or info.annotation is SecretStr or SecretStr in typing.get_args(info.annotation):
        lines += ["# Unset by default.", f"# {name} = {toml_value(UNSET_EXAMPLES[dotted])}"]
        return lines
    lines.append(f"{name} = {toml_value(default)}")
    return lines


def render() -> str:
    out = [HEADER]
    sections = []
    for name, info in Settings.model_fields.items():
        if _is_section(info):
            sections.append((name, info))
        else:
            out += [*_setting((name,), info), ""]
    for name, info in sections:
        out.append(f"[{name}]")
        assert info.annotation is not None
        for sub, sub_info in info.annotation.model_fields.items():
            out += [*_setting((name, sub), sub_info), ""]
    return "\n".join(out).rstrip("\n") + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-o", "--output", default=str(EXAMPLE), help="file to write, - for stdout")
    parser.add_argument("--check", action="store_true", help="only check that the file is up to date")
    args = parser.parse_args(argv)
    text = render()
    if args.check:
        current = Path(args.output).read_text() if Path(args.output).is_file() else ""
        if current != text:
            print(f"{args.output} is out of date: run `make config-example`", file=sys.stderr)
            return 1
        return 0
    if args.output == "-":
        sys.stdout.write(text)
    else:
        Path(args.output).write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
