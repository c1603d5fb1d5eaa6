"""The engine loads only where it runs (issue 31): a client, the table of
deadline kinds or the rule table imports no registry."""

from __future__ import annotations

import subprocess
import sys

import pytest


# The rule table too: a store that keeps no engine runs its guards (rules.takes).
@pytest.mark.parametrize(
    "module", ["askd.client", "askd.core", "askd.protocol.models", "askd.core.registry.deadlines", "askd.core.registry.rules"]
)
def test_importing_does_not_load_the_registry(module: str) -> None:
    code = f"import sys, {module}; print('askd.core.registry.registry' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False", f"importing {module} loads askd.core.registry.registry"
