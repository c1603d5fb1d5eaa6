"""Parsing what the daemon sent against the one definition of its shape
(``results``, ``events``), with one pydantic ``TypeAdapter`` per shape,
built on first use and kept: building one costs far more than a parse."""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic import TypeAdapter

T = TypeVar("T")

# One adapter per shape, for the life of the process (the shapes are few and fixed).
_ADAPTERS: dict[object, TypeAdapter[Any]] = {}


def adapter(shape: type[T]) -> TypeAdapter[T]:
    """The kept ``TypeAdapter`` of a shape (a ``TypedDict``, a model)."""
    kept = _ADAPTERS.get(shape)
    if kept is None:
        kept = _ADAPTERS[shape] = TypeAdapter(shape)
    return kept


def parse(shape: type[T], data: Any) -> T:
    """``data`` (parsed JSON) checked against ``shape``: keys a newer daemon
    added are kept where the shape allows more (a payload), else dropped;
    absent optional ones read as None. Raises pydantic's
    ``ValidationError`` when it does not fit."""
    return adapter(shape).validate_python(data)
