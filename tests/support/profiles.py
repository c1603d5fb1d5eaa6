"""Hypothesis profiles for askd's property-based tests.

``ci`` (the default) keeps the model test and the fuzzers within their CI
budget; ``pytest --hypothesis-profile=long`` runs many more examples and
longer runs. Tests scale their own counts from the loaded profile (see
``scaled``) instead of hard-coding them, so the flag reaches every one.

Registered from ``tests/conftest.py`` because Hypothesis applies
``--hypothesis-profile`` in ``pytest_configure``, before the conftest files
of sub-directories are imported.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

_COMMON = {
    # Shared 2-core CI machines make per-example timing meaningless.
    "deadline": None,
    "suppress_health_check": [HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
    "print_blob": True,
}

settings.register_profile("ci", max_examples=100, stateful_step_count=40, **_COMMON)
settings.register_profile("long", max_examples=2000, stateful_step_count=100, **_COMMON)
settings.load_profile(os.environ.get("ASKD_HYPOTHESIS_PROFILE", "ci"))


def scaled(fraction: float, minimum: int = 5) -> int:
    """A number of examples: ``fraction`` of the loaded profile's, at least ``minimum``."""
    return max(minimum, int(settings.default.max_examples * fraction))
