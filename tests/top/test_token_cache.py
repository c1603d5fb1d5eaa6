"""askd caches verified tokens (a reconnect storm presents the same ones
again, see docs/performance.md); the cache must never let a token outlive
its ``exp`` nor remember a failure as a success."""

from __future__ import annotations

import time

import pytest

from askd import tokens

SECRET = "cache-secret-0123456789abcdef-0123456789"


class FakeTime:
    def __init__(self, now: float) -> None:
        self.now = now

    def time(self) -> float:
        return self.now


def test_a_cached_token_still_expires(monkeypatch: pytest.MonkeyPatch) -> None:
    token = tokens.issue(SECRET, "user", "alice", ttl=60)
    got = tokens.verify(SECRET, token)  # now cached
    assert (got.role, got.sub) == ("user", "alice") and got.exp is not None and got.iat is not None
    clock = FakeTime(time.time() + 61)
    monkeypatch.setattr(tokens, "time", clock)
    with pytest.raises(tokens.TokenError, match="expired"):
        tokens.verify(SECRET, token)


def test_a_cached_token_is_only_good_for_its_secret() -> None:
    token = tokens.issue(SECRET, "agent")
    assert tokens.verify(SECRET, token).role == "agent"
    with pytest.raises(tokens.TokenError):
        tokens.verify(SECRET.replace("0", "1"), token)


def test_failures_are_not_cached() -> None:
    forged = tokens.issue(SECRET.upper(), "admin")
    for _ in range(2):
        with pytest.raises(tokens.TokenError):
            tokens.verify(SECRET, forged)


def test_the_cache_keeps_the_last_tokens_used_and_no_copy_of_them(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tokens, "CACHE_SIZE", 3)
    monkeypatch.setattr(tokens, "_cache", type(tokens._cache)())
    t1, t2, t3, t4 = (tokens.issue(SECRET, "user", f"u{i}") for i in range(4))
    for t in (t1, t2, t3, t1):  # t1 used again: t2 is now the least recent
        tokens.verify(SECRET, t)
    tokens.verify(SECRET, t4)
    assert list(tokens._cache) == [tokens._cache_key(SECRET, t) for t in (t3, t1, t4)]
    assert all(len(key) == 32 for key in tokens._cache)  # a digest, not the token
    # A token that left the cache is checked again, and still good.
    got = tokens.verify(SECRET, t2)
    assert (got.role, got.sub) == ("user", "u1")
