"""A one-time code taken before a restart stays taken after it: its use is
in the SQLite file, not the process's memory."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.open_codes import exchange, new_code, refused_as_used, user_of
from tests.system.restart import HOW, restart, running


@pytest.mark.parametrize("how", HOW)
async def test_a_code_taken_before_a_restart_is_refused_after_it(how: str, tmp_path: Path) -> None:
    async with running(tmp_path) as d:
        code = new_code()
        assert user_of(await exchange(d.http, d.url, code)) == "alice"
        await restart(d.daemon, how)
        assert refused_as_used(await exchange(d.http, d.url, code))
