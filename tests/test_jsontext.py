"""The engine's JSON text (:mod:`pausepoint.core.jsontext`) is :mod:`json`'s: the same text,
the same values, the same errors."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pausepoint.core import jsontext

_SCALARS = st.none() | st.booleans() | st.integers() | st.floats() | st.text()
_ODD = st.sampled_from([{1, 2}, b"x", (1, 2)])
_VALUES = st.recursive(
    _SCALARS | _ODD,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(
        st.text(max_size=4) | st.integers() | st.none(), inner, max_size=4),
    max_leaves=12)


def _outcome(f: Callable[[Any], Any], value: Any) -> tuple[str, str]:
    try:
        return "ok", repr(f(value))
    except Exception as exc:  # the refusal must be the same one
        return type(exc).__name__, str(exc)


@settings(max_examples=400, deadline=None)
@given(_VALUES)
def test_state_json_is_the_encoders_text(value: Any) -> None:
    assert _outcome(jsontext.state_json, value) == \
        _outcome(jsontext.STATE_ENCODER.encode, value)


@settings(max_examples=400, deadline=None)
@given(st.one_of(
    _VALUES.map(lambda v: json.dumps(v, default=repr)),
    st.text(alphabet=' \t\n{}[]",:0123456789.eE+-truefalsnNaI\ufeff', max_size=12),
    st.text(max_size=8)))
def test_loads_is_json_loads(text: str) -> None:
    assert _outcome(jsontext.loads, text) == _outcome(json.loads, text)


def test_a_failed_encoding_leaves_no_marker_behind() -> None:
    """An encoding that fails inside a container leaves that container in the kept encoder's
    circular-reference markers: the encoder is dropped, so the container encodes later."""
    inner: dict[str, Any] = {"bad": {1, 2}}
    outer = {"inner": inner}
    with pytest.raises(TypeError):
        jsontext.state_json(outer)
    del inner["bad"]
    assert jsontext.state_json(outer) == '{"inner":{}}'
    loop: dict[str, Any] = {}
    loop["self"] = loop
    with pytest.raises(ValueError, match="Circular reference detected"):
        jsontext.state_json(loop)
