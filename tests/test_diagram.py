"""The generated spec text equals what the lifecycle table and the error codes generate, so the
diagram, the transition list, the ordered checks and the error-code table cannot drift from the
code.  Regenerate with the commands in :mod:`pausepoint.system.diagram`'s docstring."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from pausepoint.core import lifecycle as lc
from pausepoint.core.clauses import CLAUSES, ErrorCode
from pausepoint.system import diagram

ROOT = Path(__file__).resolve().parents[1]
CONTRACT = ROOT / "spec" / "contract.md"
LIFECYCLE = ROOT / "spec" / "lifecycle.md"
REQUIRED_SECTIONS = ("error-codes", "transitions", "pause-checks", "resume-checks")

REGENERATE = ("regenerate it: python -c \"import pausepoint.system.diagram as d; "
              "print(d.lifecycle_markdown(), end='')\" > spec/lifecycle.md")


def test_committed_lifecycle_md_is_the_generated_text() -> None:
    assert LIFECYCLE.read_text(encoding="utf-8") == diagram.lifecycle_markdown(), (
        "spec/lifecycle.md differs from what lifecycle.TABLE generates; " + REGENERATE)


def test_contract_has_every_generated_section_once() -> None:
    text = CONTRACT.read_text(encoding="utf-8")
    for name in REQUIRED_SECTIONS:
        assert text.count(diagram.begin_marker(name)) == 1, name
        assert text.count(diagram.end_marker(name)) == 1, name
    assert set(diagram.generated_sections(text)) == set(REQUIRED_SECTIONS)


@pytest.mark.parametrize("name", REQUIRED_SECTIONS)
def test_contract_section_is_the_generated_text(name: str) -> None:
    body = diagram.generated_sections(CONTRACT.read_text(encoding="utf-8"))[name]
    assert body == diagram.SECTIONS[name](), (
        f"the generated section {name!r} of spec/contract.md is stale; regenerate it with "
        "pausepoint.system.diagram.regenerate (see its module docstring)")


def test_regenerate_is_a_fixed_point_of_the_committed_contract() -> None:
    text = CONTRACT.read_text(encoding="utf-8")
    assert diagram.regenerate(text) == text


def test_splice_replaces_only_the_named_section() -> None:
    doc = "\n".join(["intro", diagram.begin_marker("a"), "old a", diagram.end_marker("a"),
                     "middle", diagram.begin_marker("b"), "old b", diagram.end_marker("b"),
                     "end"])
    new = diagram.splice(doc, "a", "new a\n")
    assert diagram.generated_sections(new) == {"a": "new a\n", "b": "old b\n"}
    assert new.replace("new a", "old a") == doc
    with pytest.raises(ValueError):
        diagram.splice(doc, "missing", "x\n")
    with pytest.raises(ValueError):
        diagram.splice(doc + "\n" + diagram.begin_marker("a"), "a", "x\n")


def test_a_stale_section_is_detected() -> None:
    """The comparison above can fail: a contract whose table lost a row differs."""
    text = CONTRACT.read_text(encoding="utf-8")
    body = diagram.generated_sections(text)["error-codes"]
    broken = diagram.splice(text, "error-codes", body.replace("| `not_due` |", "| `not_dew` |"))
    assert diagram.generated_sections(broken)["error-codes"] != diagram.error_code_table()
    assert diagram.regenerate(broken) == text


# -- what the generators say -----------------------------------------------------------------


def test_mermaid_draws_every_accepting_transition() -> None:
    text = diagram.mermaid()
    assert text.startswith("```mermaid\nstateDiagram-v2\n") and text.endswith("```\n")
    edges: dict[tuple[str, str], set[str]] = {}
    for line in text.splitlines():
        m = re.fullmatch(r"    (\S+) --> (\S+)(?: : (.+))?", line)
        if m and m[3]:
            edges[(m[1], m[2])] = set(m[3].split(" / "))
    expected: dict[tuple[str, str], set[str]] = {}
    for src, name, dst in lc.transitions():
        expected.setdefault((src.value, dst.value), set()).add(name)
    assert edges == expected
    assert f"    [*] --> {lc.Phase.RUNNING.value}" in text
    for phase in lc.Phase:
        assert (f"    {phase.value} --> [*]" in text) == (phase in lc.TERMINAL)


def test_transition_list_has_every_row_in_table_order() -> None:
    rows = [line for line in diagram.transition_list().splitlines()
            if re.match(r"\| \d+ \|", line)]
    assert len(rows) == len(lc.TABLE)
    for n, (line, row) in enumerate(zip(rows, lc.TABLE, strict=True), start=1):
        cells = [c.strip() for c in line.strip("|").split(" | ")]
        assert cells[0] == str(n)
        assert cells[1] == f"`{row.event.__name__}`"
        assert cells[2] == f"`{row.source.value}`"
        assert cells[-1] == f"`{row.clause}`"
        if row.refuse is not None:
            assert cells[4] == f"refused `{row.refuse.value}`"
        else:
            assert cells[4].startswith("→ ")


def test_check_lists_follow_the_declared_order() -> None:
    for text, checks in ((diagram.pause_checks(), lc.PAUSE_CHECKS),
                         (diagram.resume_checks(), lc.RESUME_CHECKS)):
        numbered = re.findall(r"^(\d+)\. `([a-z_]+)`", text, re.MULTILINE)
        assert [name for _, name in numbered] == [c.name for c in checks]
        assert [int(n) for n, _ in numbered] == list(range(1, len(checks) + 1))
    per_phase = re.findall(r"^   - `([a-z_]+)`: ", diagram.resume_checks(), re.MULTILINE)
    assert per_phase == [r.source.value for r in lc.TABLE if r.event is lc.Resume]


def test_error_code_table_lists_every_code_in_order() -> None:
    codes = re.findall(r"^\| `([a-z_]+)` \|", diagram.error_code_table(), re.MULTILINE)
    assert codes == [c.value for c in ErrorCode]


def test_clause_lines_are_rendered_from_the_catalogue() -> None:
    """Every clause line of the contract is what :func:`diagram.clause_line` renders; a line
    that drifted (another summary, level or anchor) is rewritten, prose around it is kept."""
    text = CONTRACT.read_text(encoding="utf-8")
    for c in CLAUSES:
        assert text.count(diagram.clause_line(c) + "\n") == 1, c.id
    c = CLAUSES[5]
    line = diagram.clause_line(c)
    drifted = line.replace(f'<a id="{c.id}">', '<a id="old">').replace("(MUST,", "(SHOULD,")
    broken = text.replace(line, drifted + " Extra words.")
    assert broken != text
    assert diagram.clause_lines(broken) == text
    assert diagram.regenerate(broken) == text
