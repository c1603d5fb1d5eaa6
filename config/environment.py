"""The ``ASKD_*`` environment: which variables askd knows, read from the
settings model's own fields (a new field is known at once), and lists
written either as JSON or comma-separated.

pydantic-settings ignores an unknown top-level variable, so a misspelt one
(``ASKD_QUESTION_TIMEOUT=60``) would silently leave the default in force;
askd refuses it instead, naming the setting it probably meant. The
variables Kubernetes adds for a Service named ``askd`` (``ASKD_SERVICE_HOST``,
``ASKD_PORT=tcp://...``; ``service_links``) are no settings and no typos:
they are ignored."""

from __future__ import annotations

import difflib
import json
import os
import types
import typing
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel
from pydantic.fields import FieldInfo
from pydantic_settings import BaseSettings, EnvSettingsSource

from askd.config.service_links import service_links

PREFIX = "ASKD_"
NESTED = "__"

#: askd's own variables that are not settings: read by the CLI and the
#: clients (docs/protocol.md section 8), and the knobs of the repository's
#: tests and benchmarks, which start daemons with the environment they run in.
NON_SETTING_VARIABLES = frozenset(
    {
        "ASKD_CONFIG",
        "ASKD_URL",
        "ASKD_ADMIN_URL",
        "ASKD_AGENT_TOKEN",
        "ASKD_ADMIN_TOKEN",
        "ASKD_CA_FILE",
        "ASKD_DEBUG",
        # tests and benchmarks
        "ASKD_SOAK_SECONDS",
        "ASKD_CLUSTER_SOAK_SECONDS",
        "ASKD_CRASH_SOAK_SECONDS",
        "ASKD_HYPOTHESIS_PROFILE",
        "ASKD_UPDATE_SCREENSHOT",
    }
)

LIST_FORM = 'a JSON list like ["a", "b"], or comma-separated values like a,b'


class ConfigError(Exception):
    """Invalid configuration, described in one line naming the setting."""


def env_name(loc: tuple[Any, ...]) -> str:
    """``("limits", "max_questions")`` -> ``ASKD_LIMITS__MAX_QUESTIONS``."""
    return PREFIX + NESTED.join(str(p).upper() for p in loc)


def _unwrap(annotation: Any) -> Any:
    """``X | None`` -> ``X``."""
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        if len(args) == 1:
            return args[0]
    return annotation


def _section(annotation: Any) -> type[BaseModel] | None:
    inner = _unwrap(annotation)
    return inner if isinstance(inner, type) and issubclass(inner, BaseModel) else None


def is_list(field: FieldInfo | None) -> bool:
    return field is not None and typing.get_origin(_unwrap(field.annotation)) is list


def setting_variables(model: type[BaseModel], prefix: str = PREFIX) -> dict[str, tuple[str, FieldInfo]]:
    """Every variable that sets a field of ``model``: its name -> (the
    setting's dotted name, its field). A section's own name (``ASKD_LIMITS``)
    takes the whole section as JSON, as pydantic-settings allows."""
    out: dict[str, tuple[str, FieldInfo]] = {}
    dotted = prefix[len(PREFIX) :].lower().replace(NESTED, ".")
    for name, field in model.model_fields.items():
        var = prefix + name.upper()
        out[var] = (dotted + name, field)
        section = _section(field.annotation)
        if section is not None:
            out.update(setting_variables(section, var + NESTED))
    return out


def setting_names(model: type[BaseModel], prefix: str = "") -> list[str]:
    """Every dotted setting name (``port``, ``limits.max_questions``), as a TOML file spells them."""
    out = []
    for name, field in model.model_fields.items():
        section = _section(field.annotation)
        if section is None:
            out.append(prefix + name)
        else:
            out.extend(setting_names(section, f"{prefix}{name}."))
    return out


def did_you_mean(name: str, candidates: list[str], prefix: str = "") -> str:
    """``; did you mean X?`` for the closest candidate, compared without
    their common ``prefix`` (which would make every pair look alike)."""
    bare = {c[len(prefix) :]: c for c in candidates}
    close = difflib.get_close_matches(name[len(prefix) :], list(bare), n=1, cutoff=0.75)
    return f"; did you mean {bare[close[0]]}?" if close else ""


def _json_form(value: str) -> bool:
    return value.lstrip().startswith(("[", "{"))


def check_environment(model: type[BaseModel], environ: Mapping[str, str] | None = None) -> None:
    """Refuse an ``ASKD_*`` variable that askd does not know, and a list or
    section given as JSON that does not parse; one line each, naming the variable."""
    environ = os.environ if environ is None else environ
    known = setting_variables(model)
    links = service_links(environ)
    for raw_name, value in sorted(environ.items()):
        name = raw_name.upper()  # pydantic-settings matches names without case
        if not name.startswith(PREFIX) or name in NON_SETTING_VARIABLES or raw_name in links:
            continue
        if name not in known:
            candidates = [v for v in known if _section(known[v][1].annotation) is None] + sorted(NON_SETTING_VARIABLES)
            raise ConfigError(f"unknown variable {raw_name}: askd has no such setting{did_you_mean(name, candidates, PREFIX)}")
        setting, field = known[name]
        as_list = is_list(field)
        if as_list and not _json_form(value):
            continue  # comma-separated: split by the source below
        if as_list or _section(field.annotation) is not None:
            try:
                # The standard library's reader: its error (line and column) is
                # the one the message below quotes to whoever wrote the variable.
                json.loads(value)
            except ValueError as err:
                form = LIST_FORM if as_list else f"a JSON object of the {setting} section's settings"
                raise ConfigError(f"invalid setting {setting} ({raw_name}): cannot read it as JSON ({err}); write {form}") from None


class EnvSource(EnvSettingsSource):
    """The environment, without Kubernetes' service links (``ASKD_PORT=tcp://...``
    is not the port), where a list may also be comma-separated
    (``ASKD_TRUSTED_PROXIES=127.0.0.1,10.0.0.0/8``)."""

    def __init__(self, settings_cls: type[BaseSettings], **kwargs: Any) -> None:
        super().__init__(settings_cls, **kwargs)
        links = service_links(os.environ)
        if links:
            key = (lambda n: n) if self.case_sensitive else str.lower
            # A link's name read without case, unless a variable that is no link reads the same.
            dropped = {key(n) for n in links} - {key(n) for n in os.environ if n not in links}
            self.env_vars = {k: v for k, v in self.env_vars.items() if k not in dropped}

    def decode_complex_value(self, field_name: str, field: FieldInfo, value: Any) -> Any:
        if isinstance(value, str) and is_list(field) and not _json_form(value):
            return [item.strip() for item in value.split(",") if item.strip()]
        return super().decode_complex_value(field_name, field, value)
