"""SmallMap, the registry's one-entry-friendly mapping: it behaves as an
insertion-ordered dict through every move between none, one and many
entries, and one entry costs less than a dict's."""

from __future__ import annotations

import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

from askd.core.smallmap import SmallMap

KEYS = st.sampled_from(["a", "b", "c", "d"])
OPS = st.lists(st.tuples(st.sampled_from(["set", "del", "pop"]), KEYS, st.integers()), max_size=40)


@given(OPS)
def test_it_behaves_as_an_ordered_dict(ops: list[tuple[str, str, int]]) -> None:
    small: SmallMap[str, int] = SmallMap()
    model: dict[str, int] = {}
    for op, key, value in ops:
        if op == "set":
            small[key] = value
            model[key] = value
        elif op == "pop":
            assert small.pop(key, None) == model.pop(key, None)
        elif key in model:
            del small[key]
            del model[key]
        else:
            with pytest.raises(KeyError):
                del small[key]
        assert list(small) == list(model)
        assert list(small.values()) == list(model.values())
        assert list(small.items()) == list(model.items())
        assert len(small) == len(model) and bool(small) == bool(model)
        for k in "abcde":
            assert (k in small) == (k in model)
            assert small.get(k) == model.get(k)
            if k in model:
                assert small[k] == model[k]
            else:
                with pytest.raises(KeyError):
                    small[k]


def test_a_key_that_compares_equal_is_the_same_entry() -> None:
    small: SmallMap[str, int] = SmallMap()
    small["session-1"] = 1
    small["".join(["session-", "1"])] = 2  # equal, not the same object
    assert len(small) == 1 and small["session-1"] == 2


def test_one_entry_costs_less_than_a_dict() -> None:
    small: SmallMap[str, None] = SmallMap()
    small["s1"] = None
    assert sys.getsizeof(small) < sys.getsizeof({"s1": None}) / 2
