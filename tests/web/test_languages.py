"""Which language a page speaks: Accept-Language on the server (the page's
navigator.languages choice is the same lookup, tests/system/browser/test_rich.py)."""

from __future__ import annotations

import pytest

from askd.web.languages import from_accept_language, pick_language

# (wanted, chosen): shared with the page's test, which runs them in Chromium.
LOOKUPS = [
    (["zh-CN"], "zh-CN"),
    (["zh"], "zh-CN"),
    (["zh-Hans"], "zh-CN"),
    (["zh-SG"], "zh-CN"),
    (["zh-Hans-CN"], "zh-CN"),
    (["ZH-cn"], "zh-CN"),
    (["en-GB"], "en"),
    (["fr-FR", "de"], "en"),
    (["fr-FR", "zh-Hans-SG", "en"], "zh-CN"),
    (["en-US", "zh-CN"], "en"),
    ([], "en"),
]


@pytest.mark.parametrize(("wanted", "chosen"), LOOKUPS)
def test_lookup(wanted: list[str], chosen: str) -> None:
    assert pick_language(wanted) == chosen


@pytest.mark.parametrize(
    ("header", "chosen"),
    [
        ("zh-CN,zh;q=0.9,en;q=0.8", "zh-CN"),
        ("en-US,en;q=0.9,zh-CN;q=0.8", "en"),
        ("fr;q=0.9, zh-SG;q=0.5", "zh-CN"),
        ("en;q=0.1, zh-Hans;q=0.9", "zh-CN"),  # q-values, not order
        ("zh;q=0, en", "en"),  # q=0: not acceptable
        ("*", "en"),
        ("", "en"),
        (None, "en"),
        ("zh;q=bad, en", "en"),
    ],
)
def test_accept_language(header: str | None, chosen: str) -> None:
    assert from_accept_language(header) == chosen
