"""The token test vectors in ``spec/vectors/tokens.json`` (described in
``spec/token-format.md``): the committed file is the generated one, every vector holds against
the reference verifier, and every rule of the format is exercised by an invalid vector."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pausepoint_conformance.vectors.tokens import FLAGS, generate, render, verify_vector

VECTORS = Path(__file__).resolve().parents[1] / "spec" / "vectors" / "tokens.json"
DOC: dict[str, Any] = json.loads(VECTORS.read_text(encoding="utf-8"))
CASES = [(g["key"], t) for g in DOC["testGroups"] for t in g["tests"]]


def test_the_committed_vectors_are_the_generated_ones() -> None:
    assert VECTORS.read_text(encoding="utf-8") == render(generate()), (
        "regenerate: python -m pausepoint_conformance.vectors.tokens spec/vectors/tokens.json")


@pytest.mark.parametrize(("key", "test"), CASES, ids=[f"{t['tcId']}-{t['flags'][0]}"
                                                      for _k, t in CASES])
def test_token_vector(key: dict[str, Any], test: dict[str, Any]) -> None:
    """token.parse.strict, token.integrity, token.key-id, token.claims: each vector gets the
    result the format requires from the reference verifier."""
    assert verify_vector(key, test) is None


def test_the_vectors_cover_every_rule_and_are_well_formed() -> None:
    assert DOC["numberOfTests"] == len(CASES)
    assert [t["tcId"] for _k, t in CASES] == list(range(1, len(CASES) + 1))
    seen = {f for _k, t in CASES for f in t["flags"]}
    assert seen == set(FLAGS) == set(DOC["notes"])
    for _k, t in CASES:
        assert (t["result"] == "valid") == ("claims" in t) == ("error" not in t)
    assert {t["error"] for _k, t in CASES if t["result"] == "invalid"} == {
        "token_malformed", "token_invalid"}


def test_a_wrong_expectation_is_caught() -> None:
    """The runner can fail: a valid vector declared invalid, and the other way round."""
    key, valid = next((k, t) for k, t in CASES if t["result"] == "valid")
    assert verify_vector(key, {**valid, "result": "invalid", "error": "token_invalid"})
    key, bad = next((k, t) for k, t in CASES if t["result"] == "invalid")
    assert verify_vector(key, {**bad, "error": "token_invalid" if bad["error"] ==
                               "token_malformed" else "token_malformed"})
