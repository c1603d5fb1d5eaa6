"""One line for a settings validation error, naming where the value came
from: the TOML file and its key, else the environment variable."""

from __future__ import annotations

import os
import tomllib
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from askd.config.environment import LIST_FORM, ConfigError, did_you_mean, env_name, is_list, setting_names, setting_variables
from askd.config.service_links import service_links


def described(model: type[BaseModel], error: Any, flags: dict[str, Any], toml: Path | None) -> ConfigError:
    loc = tuple(str(p) for p in error["loc"] if not isinstance(p, int)) or ("settings",)
    name = ".".join(loc)
    in_file = toml is not None and _in_toml(toml, loc) and not _in_flags_or_env(flags, loc)
    if error["type"] == "extra_forbidden" and in_file:
        hint = did_you_mean(name, setting_names(model))
        return ConfigError(f"unknown key {name} in {toml}: askd has no such setting{hint}")
    _, field = setting_variables(model).get(env_name(loc), (None, None))
    hint = f" (write {LIST_FORM})" if error["type"] == "list_type" and is_list(field) and not in_file else ""
    where = f"in {toml}" if in_file else f"({env_name(loc)})"
    return ConfigError(f"invalid setting {name} {where}: {error['msg']}{hint}")


def _in_toml(toml: Path, loc: tuple[str, ...]) -> bool:
    try:
        node: Any = tomllib.loads(toml.read_text())
    except (OSError, ValueError):
        return False
    for part in loc:
        if not isinstance(node, dict) or part not in node:
            return False
        node = node[part]
    return True


def _in_flags_or_env(flags: dict[str, Any], loc: tuple[str, ...]) -> bool:
    """A flag sets ``loc``, or a variable sets it or its whole section."""
    links = service_links(os.environ)  # Kubernetes' ASKD_PORT=tcp://... sets nothing
    environ = {k.upper() for k in os.environ if k not in links}
    if any(env_name(loc[: i + 1]) in environ for i in range(len(loc))):
        return True
    node: Any = flags
    for part in loc:
        node = node.get(part) if isinstance(node, dict) else None
    return node is not None
