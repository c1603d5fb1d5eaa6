"""``askd.receipts`` stays light: an executor imports it without the daemon."""

from __future__ import annotations

import subprocess
import sys


def test_importing_askd_receipts_loads_neither_tornado_nor_the_configuration() -> None:
    code = "import sys, askd.receipts; print(sorted(m for m in sys.modules if m.startswith(('tornado', 'askd.config', 'pydantic_settings', 'askd.server'))))"
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "[]"
