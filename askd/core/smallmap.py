"""A mapping for the registry's indexes that usually hold a single entry."""

from __future__ import annotations

from collections.abc import Iterator, MutableMapping, ValuesView
from typing import Any, Generic, TypeVar

K = TypeVar("K")
V = TypeVar("V")

_EMPTY: Any = object()  # the key slot of an empty map
_MANY: Any = object()  # the key slot once the entries are in a dict


class SmallMap(MutableMapping[K, V], Generic[K, V]):
    """An insertion-ordered mapping that keeps a single entry in two slots
    and moves to a dict when a second one comes.

    Most sessions hold one question, most users one session and one connection;
    a dict with one entry costs 184 bytes, this 48 (docs/performance.md,
    the memory per pending question and per connection). With two entries or more it is a dict behind a method call."""

    __slots__ = ("_key", "_value")

    def __init__(self) -> None:
        self._key: Any = _EMPTY
        self._value: Any = None  # the entry's value, or the dict of them all

    def __getitem__(self, key: K) -> V:
        if self._key is _MANY:
            return self._value[key]  # type: ignore[no-any-return]
        if self._key is not _EMPTY and self._key == key:
            return self._value  # type: ignore[no-any-return]
        raise KeyError(key)

    def get(self, key: K, default: Any = None) -> Any:
        if self._key is _MANY:
            return self._value.get(key, default)
        if self._key is not _EMPTY and self._key == key:
            return self._value
        return default

    def __setitem__(self, key: K, value: V) -> None:
        if self._key is _MANY:
            self._value[key] = value
        elif self._key is _EMPTY or self._key == key:
            self._key, self._value = key, value
        else:
            self._value = {self._key: self._value, key: value}
            self._key = _MANY

    def __delitem__(self, key: K) -> None:
        if self._key is _MANY:
            del self._value[key]
            if not self._value:
                self._key, self._value = _EMPTY, None
        elif self._key is not _EMPTY and self._key == key:
            self._key, self._value = _EMPTY, None
        else:
            raise KeyError(key)

    def __iter__(self) -> Iterator[K]:
        if self._key is _MANY:
            return iter(self._value)
        return iter(() if self._key is _EMPTY else (self._key,))

    def __len__(self) -> int:
        if self._key is _MANY:
            return len(self._value)
        return 0 if self._key is _EMPTY else 1

    def values(self) -> ValuesView[V]:
        if self._key is _MANY:
            return self._value.values()  # type: ignore[no-any-return]
        return ValuesView(self)

    def __repr__(self) -> str:
        return f"SmallMap({dict(self.items())!r})"
