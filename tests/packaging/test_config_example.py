"""packaging/askd.toml is generated from the settings model: it must match
what the generator writes now, parse, and give exactly the defaults."""

from __future__ import annotations

import importlib.util
import re
import tomllib
from pathlib import Path
from types import ModuleType

import pytest
from pydantic import BaseModel

from askd.config import Settings, load_settings

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "packaging" / "askd.toml"


def gen_config() -> ModuleType:
    # Loaded from its path: `packaging` as a package name would shadow PyPI's.
    spec = importlib.util.spec_from_file_location("askd_gen_config", ROOT / "packaging" / "gen_config.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_committed_example_is_what_the_generator_writes() -> None:
    assert EXAMPLE.read_text() == gen_config().render(), "packaging/askd.toml is stale: run `make config-example`"


def test_every_setting_is_in_the_example() -> None:
    text = EXAMPLE.read_text()
    for name, info in Settings.model_fields.items():
        section = info.annotation
        if isinstance(section, type) and issubclass(section, BaseModel):
            assert f"\n[{name}]\n" in text, name
            for sub in section.model_fields:
                assert f"\n{sub} = " in text or f"\n# {sub} = " in text, f"{name}.{sub}"
        else:
            assert f"\n{name} = " in text or f"\n# {name} = " in text, name


def test_example_loads_and_gives_the_defaults(tmp_path: Path) -> None:
    loaded = load_settings(config_file=EXAMPLE)
    defaults = load_settings()
    assert loaded.model_dump() == defaults.model_dump()
    # the secret stays commented out: a shipped example must not carry one
    assert loaded.auth.secret is None
    assert "secret" not in tomllib.loads(EXAMPLE.read_text()).get("auth", {})


def test_uncommenting_the_examples_still_loads(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The commented-out lines (state_dir, secret, log format) are valid too."""
    monkeypatch.delenv("ASKD_STATE_DIR")  # the environment would win over the file
    text = re.sub(r"^# (\w+ = )", r"\1", EXAMPLE.read_text(), flags=re.M)
    path = tmp_path / "askd.toml"
    path.write_text(text)
    s = load_settings(config_file=path)
    assert s.state_dir == Path("/var/lib/askd")
    assert s.auth.secret is not None and len(s.auth.secret.get_secret_value()) >= 32
    assert s.log.format == "json"
