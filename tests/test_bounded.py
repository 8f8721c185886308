"""The bounded caches of long runs: what they keep, and when they forget."""

from __future__ import annotations

from ci_tools.bounded import BoundedDict, LeastRecentlyStored


def test_a_bounded_dict_empties_itself_before_a_new_key_when_full() -> None:
    cache: BoundedDict[str, int] = BoundedDict(3)
    assert [cache.put(k, v) for k, v in (("a", 1), ("b", 2), ("c", 3))] == [1, 2, 3]
    assert cache.put("b", 20) == 20 and dict(cache) == {"a": 1, "b": 20, "c": 3}  # a known key: nothing forgotten
    assert cache.put("d", 4) == 4 and dict(cache) == {"d": 4}  # a new key into a full dict: it starts over
    assert cache.get("a") is None


def test_least_recently_stored_forgets_the_oldest_entry_only() -> None:
    cache: LeastRecentlyStored[str, int] = LeastRecentlyStored(2)
    cache.put("a", 1)
    cache.put("b", 2)
    cache.put("c", 3)
    assert list(cache.items()) == [("b", 2), ("c", 3)]
