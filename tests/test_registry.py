"""A plain ``dict`` payload or answer is read by :mod:`json`'s C scanner, not pydantic
(:func:`pausepoint.core.registry._from_json`): the same verdict and the same validated value --
its members, their types and their order -- as pydantic's strict JSON check of the same
canonical text."""

from __future__ import annotations

from typing import Any

import pydantic
from hypothesis import given, settings
from hypothesis import strategies as st

from pausepoint.core import registry
from pausepoint.core.canonical import bounded_json

_SCALARS = (st.none() | st.booleans() | st.integers(-2**60, 2**60)
            | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=6)
            | st.sampled_from([1e16, -0.0, 1e21, 5e-324, 1.5e-05, "\u00e9\U0001f600", "\x7f"]))
_VALUES = st.recursive(
    _SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(
        st.text(max_size=4), inner, max_size=4),
    max_leaves=12)


def _by_pydantic(model: type[object], value: object) -> registry.Validated | None:
    """``Interaction._validate`` as it was: every model, ``dict`` too, through pydantic."""
    try:
        text = bounded_json(value)
        if text is None:
            return None
        return registry.Validated(
            text, registry._adapter(model).validate_json(text, strict=True))
    except (TypeError, ValueError, RecursionError):  # pydantic's refusal is a ValueError
        return None


def _seen(v: registry.Validated | None) -> tuple[str, str, str] | None:
    # repr shows each member's type and the members' order (1 and 1.0 and True differ)
    return None if v is None else (v.text, repr(v.value), type(v.value).__name__)


@settings(max_examples=600, deadline=None)
@given(_VALUES | st.dictionaries(st.text(max_size=4), _VALUES, max_size=5))
def test_a_dict_is_validated_as_pydantic_validates_it(value: Any) -> None:
    asked = registry.Interaction("q")
    assert asked.payload is dict and asked.response is dict
    assert _seen(asked.validate_payload(value)) == _seen(_by_pydantic(dict, value))


def test_the_dict_reader_keeps_the_texts_order_and_refuses_what_is_no_object() -> None:
    asked = registry.Interaction("q")
    got = asked.validate_payload({"b": 1, "a": [2.5, {"d": None, "c": True}]})
    assert got is not None and repr(got.value) == "{'a': [2.5, {'c': True, 'd': None}], 'b': 1}"
    for no_object in ([1], "x", 3, None, True):
        assert asked.validate_payload(no_object) is None
    try:
        asked.validated_response([1])
    except pydantic.ValidationError:
        pass  # refused as pydantic refuses it, with its own error
    else:  # pragma: no cover - the check is broken
        raise AssertionError("a list was taken for a dict answer")


def _kept_by_canonical_json(value: object) -> tuple[str, str, str] | None:
    """``validate_response`` as it was for a ``dict`` answer: its kept text by canonical_json."""
    from pausepoint.core.canonical import canonical_json
    validated = _by_pydantic(dict, value)
    if validated is None:
        return None
    try:
        kept = canonical_json(validated.value)
    except (TypeError, ValueError, RecursionError):
        return None
    return validated.text, repr(validated.value), kept


@settings(max_examples=600, deadline=None)
@given(st.dictionaries(st.text(max_size=4), _VALUES, max_size=5))
def test_a_dict_answers_kept_text_is_its_canonical_text(value: Any) -> None:
    """The kept text of a ``dict`` answer (built_json of its instance) is canonical_json's, and
    refused where that refuses (an integral float past 2**53 - 1 reads back as an integer no
    canonical text holds)."""
    got = registry.Interaction("q").validate_response(value)
    seen = None if got is None else (got.text, repr(got.value), got.value_text)
    assert seen == _kept_by_canonical_json(value)
