"""Answer link tokens (askd.links): what one names, and that nothing else
reads as one."""

from __future__ import annotations

import json

import pytest

from askd import links, tokens
from askd.core import Request
from tests.conftest import SECRET


def request(questions: list[dict]) -> Request:
    frame = json.dumps({"type": "ask_user_questions", "payload": {"questions": questions}}).encode()
    return Request("r1", "s1", "alice", 0.0, 60.0, frame=frame)


def test_a_link_names_its_question_recipient_and_option() -> None:
    t = links.mint(SECRET, "s1", "r1", "alice", 2)
    assert links.read(SECRET, t) == links.LinkClaim("s1", "r1", "alice", 2)
    shared = links.mint(SECRET, "s1", "r1", None)
    assert links.read(SECRET, shared) == links.LinkClaim("s1", "r1", None, None)
    assert set(t) <= set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.")  # a path segment as it is


def test_every_altered_character_is_refused() -> None:
    t = links.mint(SECRET, "s1", "r1", "alice", 0)
    for i, ch in enumerate(t):
        for other in {"A", "B", "z", "0", "-", "_", "."} - {ch}:
            assert links.read(SECRET, t[:i] + other + t[i + 1 :]) is None, (i, other)
    assert links.read(SECRET, t + "A") is None
    assert links.read(SECRET, t[:-1]) is None


def test_another_secret_reads_nothing() -> None:
    assert links.read("another-secret-0123456789abcdef", links.mint(SECRET, "s1", "r1", "alice")) is None


def test_a_link_is_no_token_and_a_token_is_no_link() -> None:
    t = links.mint(SECRET, "s1", "r1", "alice")
    with pytest.raises(tokens.TokenError):
        tokens.verify(SECRET, t)
    for role, sub in (("user", "alice"), ("admin", None), ("agent", None)):
        assert links.read(SECRET, tokens.issue(SECRET, role, sub)) is None  # type: ignore[arg-type]
    assert links.read(SECRET, tokens.issue_open_code(SECRET, "alice", None)) is None


@pytest.mark.parametrize("junk", ["", ".", "a.b", "a" * 5000, "é.é", "\x00", "W10.sig"])
def test_junk_is_no_link(junk: str) -> None:
    assert links.read(SECRET, junk) is None


def test_links_for_one_question_with_options() -> None:
    req = request([{"question": "Deploy?", "options": [{"label": "Yes"}, {"label": "No"}]}])
    got = links.links_for("https://askd.example/base/", SECRET, req, ["alice", "bob"])
    assert set(got) == {"alice", "bob"}
    alice = got["alice"]
    assert alice["open"].startswith("https://askd.example/base/a/")
    assert links.read(SECRET, alice["open"].rsplit("/", 1)[1]) == links.LinkClaim("s1", "r1", "alice", None)
    assert [o["label"] for o in alice["options"]] == ["Yes", "No"]
    claims = [links.read(SECRET, o["url"].rsplit("/", 1)[1]) for o in got["bob"]["options"]]
    assert claims == [links.LinkClaim("s1", "r1", "bob", 0), links.LinkClaim("s1", "r1", "bob", 1)]


@pytest.mark.parametrize(
    "questions",
    [
        [{"question": "Why?"}],
        [{"question": "A?", "options": [{"label": "x"}]}, {"question": "B?", "options": [{"label": "y"}]}],
    ],
)
def test_no_one_tap_links_without_one_question_with_options(questions: list[dict]) -> None:
    assert links.link_set("http://h", SECRET, request(questions), "alice")["options"] == []


@pytest.mark.parametrize("odd", ["\ud800", "a\udfffb", "😀", "é", "\u202e"])
def test_any_id_a_question_may_have_mints_and_reads_back(odd: str) -> None:
    t = links.mint(SECRET, f"s{odd}", "r1", f"u{odd}", 0)
    assert links.read(SECRET, t) == links.LinkClaim(f"s{odd}", "r1", f"u{odd}", 0)
