"""``pausepoint.core.values.record``: immutable by contract -- the type checker refuses an
assignment to a field of a record -- with equality and a hash by value, as ``attrs.frozen``."""

from __future__ import annotations

import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

import attrs
import pytest
from mypy import api

from pausepoint.core.lifecycle import PauseState, Phase
from pausepoint.core.ports import Claims, RunRecord, RunStatus
from pausepoint.engine.embed import RunResult


def claims(**over: object) -> Claims:
    base: dict[str, object] = dict(
        interrupt_id="i", run_id="r", root_run_id="r", session_id="s", thread_id="t",
        checkpoint_id="c", scope="sc", name="n", tool_call_id="", payload_digest="d",
        issued_at=1, expires_at=2)
    base.update(over)
    return Claims(**base)  # type: ignore[arg-type]


@pytest.mark.parametrize("make", [
    claims,
    lambda: PauseState(phase=Phase.PAUSED, expires_at=5),
    lambda: RunRecord(run_id="r", root_run_id="r", parent_run_id="", session_id="s",
                      thread_id="t", scope="sc", status=RunStatus.RUNNING, state="{}"),
    lambda: RunResult(run_id="r", status=RunStatus.DONE, output="out"),
], ids=["Claims", "PauseState", "RunRecord", "RunResult"])
def test_records_are_values(make: Callable[[], Any]) -> None:
    """Equal by value, hashed by value (usable in sets and as keys), and evolve builds a new
    one: as frozen attrs classes are."""
    a, b = make(), make()
    assert a == b and a is not b and hash(a) == hash(b)
    assert len({a, b}) == 1
    first = attrs.fields(type(a))[0].name
    changed = attrs.evolve(a, **{first: "other" if isinstance(getattr(a, first), str) else 7})
    assert changed != a and a == b


def test_the_type_checker_refuses_an_assignment_to_a_field(tmp_path: Path) -> None:
    """To mypy a record class is frozen: assigning a field of one is an error, in our code and
    in a user's (CI runs ``mypy --strict`` on reference, conformance and bench)."""
    snippet = tmp_path / "mutates.py"
    snippet.write_text(textwrap.dedent("""\
        from pausepoint.core.ports import RunRecord
        from pausepoint.engine.embed import RunResult


        def mutate(run: RunRecord, result: RunResult) -> None:
            run.state = "{}"
            result.output = None
        """))
    out, err, status = api.run(["--strict", "--cache-dir", str(tmp_path / "cache"),
                                "--no-error-summary", str(snippet)])
    assert status == 1, (out, err)
    assert out.count("is read-only") == 2, out
