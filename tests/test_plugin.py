"""Tests of the pytest plugin (entry point ``pytest11: pausepoint``): without its option it
adds nothing to a user's run; with ``--pausepoint-adapter`` every check becomes a test item,
unclaimed groups are skipped, failures show the clause, and vectors can be added.
"""

from __future__ import annotations

import importlib.metadata

import pytest

from pausepoint_conformance.suite import checks as _checks  # noqa: F401 - registers the checks
from pausepoint_conformance.suite.framework import CHECKS
from pausepoint_conformance.vectors.generator import FAMILIES, generate, write_all

pytest_plugins = ["pytester"]

USER_TEST = "def test_users_own():\n    assert 1 + 1 == 2\n"


def test_the_plugin_is_registered_as_an_entry_point() -> None:
    eps = importlib.metadata.entry_points(group="pytest11")
    assert any(e.name == "pausepoint" and e.value == "pausepoint_conformance.cli.pytest_plugin"
               for e in eps)


def test_without_the_option_the_plugin_does_nothing(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_user=USER_TEST)
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
    assert "pausepoint conformance" not in result.stdout.str()


def test_with_the_reference_every_check_runs(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_user=USER_TEST)
    result = pytester.runpytest("-p", "no:cacheprovider",
                                "--pausepoint-adapter=reference:memory")
    durability = [c for c in CHECKS if c.id.startswith("durability/")]
    result.assert_outcomes(passed=1 + len(CHECKS) - len(durability), skipped=len(durability))
    out = result.stdout.str()
    assert "pausepoint conformance: pausepoint-reference (memory)" in out
    assert "failed" not in out.split("pausepoint conformance")[-1].split("clauses:")[-1]


def test_a_broken_adapter_fails_with_the_clause(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(my_adapter=(
        "from pausepoint_conformance.adapters.fake import FakeAdapter\n"
        "def make():\n"
        "    return FakeAdapter(accept_every_resume=True)\n"))
    result = pytester.runpytest("-p", "no:cacheprovider", "--pausepoint-adapter=my_adapter:make",
                                "-k", "core/response-invalid or tokens/scope")
    result.assert_outcomes(failed=2)
    out = result.stdout.str()
    assert "clause:   resume.response.schema" in out
    assert "clause:   resume.binding.scope" in out
    assert "FAILED        resume.binding.scope" in out


def test_vectors_become_items_too(pytester: pytest.Pytester) -> None:
    files = generate(depth=0, families=[FAMILIES[0]])
    write_all(pytester.path / "vectors", files)
    result = pytester.runpytest("-p", "no:cacheprovider", "--pausepoint-adapter=reference:memory",
                                "--pausepoint-vectors=vectors", "-k", "basic.json")
    result.assert_outcomes(passed=1)
