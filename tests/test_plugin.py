"""Tests of the pytest plugin (entry point ``pytest11: pausepoint``): without its option it
adds nothing to a user's run; with ``--pausepoint-adapter`` every check becomes a test item,
unclaimed groups are skipped, failures show the clause, and vectors can be added.
"""

from __future__ import annotations

import importlib.metadata

import pytest

from pausepoint.core.clauses import Group
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
    durability = [c for c in CHECKS if Group.DURABILITY in c.groups]  # memory claims none
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


# -- bad input: one usage error at configure time, never a false green --------------------------


def _usage_error(result: pytest.RunResult, *named: str) -> None:
    assert result.ret == pytest.ExitCode.USAGE_ERROR, result.stdout.str()
    err = result.stderr.str()
    assert "Traceback" not in err + result.stdout.str()
    assert "INTERNALERROR" not in err + result.stdout.str()
    errors = [line for line in err.splitlines() if line.startswith("ERROR:")]
    assert len(errors) == 1, err
    for text in named:
        assert text in errors[0], errors[0]


def test_a_misspelled_adapter_is_one_usage_error(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_user=USER_TEST)
    _usage_error(pytester.runpytest("-p", "no:cacheprovider",
                                    "--pausepoint-adapter=my_adaptr:make"), "my_adaptr")
    _usage_error(pytester.runpytest("-p", "no:cacheprovider",
                                    "--pausepoint-adapter=reference:sqlit"), "reference:sqlit")
    _usage_error(pytester.runpytest("-p", "no:cacheprovider",
                                    "--pausepoint-adapter=cmd:no-such-program-xyz"),
                 "no-such-program-xyz")


def test_a_factory_that_raises_is_one_usage_error(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(my_adapter="def make():\n    raise RuntimeError('cannot reach db')\n")
    _usage_error(pytester.runpytest("-p", "no:cacheprovider",
                                    "--pausepoint-adapter=my_adapter:make"), "cannot reach db")


def test_a_missing_vectors_path_is_a_usage_error_not_a_green(pytester: pytest.Pytester) -> None:
    _usage_error(pytester.runpytest("-p", "no:cacheprovider",
                                    "--pausepoint-adapter=reference:memory",
                                    "--pausepoint-vectors=no-such-vectors"), "no-such-vectors")


def test_a_garbage_vector_file_is_a_usage_error(pytester: pytest.Pytester) -> None:
    (pytester.path / "garbage.json").write_text("{ not json")
    _usage_error(pytester.runpytest("-p", "no:cacheprovider",
                                    "--pausepoint-adapter=reference:memory",
                                    "--pausepoint-vectors=garbage.json"), "garbage.json")
    assert "errors.pydantic.dev" not in pytester.runpytest(
        "-p", "no:cacheprovider", "--pausepoint-adapter=reference:memory",
        "--pausepoint-vectors=garbage.json").stderr.str()


def test_the_count_and_the_ids(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_user=USER_TEST)
    result = pytester.runpytest("-p", "no:cacheprovider", "--pausepoint-adapter=reference:memory",
                                "--collect-only", "-q")
    out = result.stdout.str()
    ids = [line for line in out.splitlines() if "::" in line]
    assert len(ids) == 1 + len(CHECKS)
    assert f"pausepoint::{CHECKS[0].id}" in ids
    assert not any(i.startswith("::") for i in ids)
    verbose = pytester.runpytest("-p", "no:cacheprovider", "--pausepoint-adapter=reference:memory",
                                 "--collect-only")
    assert f"collected {1 + len(CHECKS)} items" in verbose.stdout.str()


def test_a_failed_handshake_stops_the_run_after_one_failure(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest("-p", "no:cacheprovider", "--pausepoint-adapter=cmd:false",
                                "--pausepoint-timeout=5")
    result.assert_outcomes(failed=1)
    out = result.stdout.str()
    assert "the handshake with cmd:false failed" in out
    assert "Traceback" not in out
