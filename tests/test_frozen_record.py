"""``@record`` value types behave as the frozen dataclasses they replace (bar the run-time setattr guard)."""

from __future__ import annotations

import dataclasses
import pickle

import pytest

from ci_tools.findings import Location
from ci_tools.frozen import record
from ci_tools.shell.model import Value


def test_equal_values_are_equal_and_hash_alike() -> None:
    a = Value("8", Location("r.sh", 3, 5), expression="$TP")
    b = Value("8", Location("r.sh", 3, 5), expression="$TP")
    assert a == b and hash(a) == hash(b) and a is not b
    assert a != dataclasses.replace(a, conditional=True)
    assert {a: 1}[b] == 1


def test_hash_and_equality_follow_every_field_as_a_frozen_dataclass_does() -> None:
    @dataclasses.dataclass(frozen=True)
    class Frozen:
        name: str
        size: int = 0

    @record
    class Plain:
        name: str
        size: int = 0

    for args in (("a",), ("a", 2), ("b", 2)):
        assert hash(Plain(*args)) == hash(Frozen(*args))
    assert Plain("a", 1) != Plain("a", 2)
    assert Plain("a") == Plain("a", 0)


def test_order_replace_and_pickling_keep_working() -> None:
    early, late = Location("a.sh", 1, 1), Location("a.sh", 2, 1)
    assert sorted([late, early]) == [early, late]
    moved = dataclasses.replace(early, note="job environment")
    assert moved.note == "job environment" and early.note == ""
    value = Value(None, late, True, "$CONC", alternatives=(Value("4", early),))
    assert pickle.loads(pickle.dumps(value)) == value
    assert [f.name for f in dataclasses.fields(Value)][:4] == ["text", "location", "conditional", "expression"]


def test_records_hold_their_fields_in_slots() -> None:
    value = Value("8", Location("r.sh", 3, 5))
    assert not hasattr(value, "__dict__") and not hasattr(value.location, "__dict__")
    with pytest.raises(AttributeError):
        value.typo = "x"  # type: ignore[attr-defined]
