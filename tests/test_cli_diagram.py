"""`pausepoint diagram` draws the pause lifecycle from its table (Mermaid, DOT, SVG), and the
diagrams the docs embed are what the table generates."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from pausepoint.core import lifecycle as lc
from pausepoint.system import diagram
from pausepoint_conformance.cli import cmd_diagram
from pausepoint_conformance.cli.main import main as cli
from tools import need

ROOT = Path(__file__).resolve().parents[1]
# Every docs page that embeds a generated lifecycle: (file, marker name, machine).
EMBEDDED = [(ROOT / "docs" / "architecture.md", "pause-lifecycle", "pause"),
            (ROOT / "docs" / "architecture.md", "run-lifecycle", "run")]


def _table_edges() -> set[tuple[str, str]]:
    return {(src.value, dst.value) for src, _, dst in lc.transitions()}


def test_mermaid_is_the_spec_generator(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli(["diagram"]) == 0
    assert capsys.readouterr().out == diagram.mermaid()


def test_dot_has_exactly_the_tables_edges(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli(["diagram", "--format", "dot"]) == 0
    text = capsys.readouterr().out
    edges = set(re.findall(r'^\s*"(\w+)" -> "(\w+)"', text, re.MULTILINE))
    assert edges == _table_edges()
    assert 'start -> "running"' in text
    doubled = set(re.findall(r'^\s*"(\w+)" \[peripheries=2\]', text, re.MULTILINE))
    assert doubled == {p.value for p in lc.TERMINAL}
    for src, name, dst in lc.transitions():
        line = next(x for x in text.splitlines() if f'"{src.value}" -> "{dst.value}"' in x)
        assert name in line


def test_svg_with_graphviz(tmp_path: Path) -> None:
    need("dot", "apt-get install graphviz")
    out = (tmp_path / "lifecycle").with_suffix(".svg")
    assert cli(["diagram", "--format", "svg", "--out", str(out)]) == 0
    svg = out.read_text()
    assert svg.lstrip().startswith("<?xml") and "<svg" in svg
    for phase in lc.Phase:
        assert phase.value in svg


def test_svg_without_graphviz_is_one_clear_error(monkeypatch: pytest.MonkeyPatch,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    real = shutil.which
    monkeypatch.setattr(shutil, "which", lambda name, *a, **k: None if name == "dot"
                        else real(name, *a, **k))
    assert cli(["diagram", "--format", "svg"]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert len(err.strip().splitlines()) == 1 and "graphviz" in err


@pytest.mark.parametrize(("page", "marker", "machine"), EMBEDDED,
                         ids=[f"{p.name}:{m}" for p, m, _ in EMBEDDED])
def test_the_docs_diagrams_are_the_generated_ones(page: Path, marker: str, machine: str) -> None:
    body = diagram.generated_sections(page.read_text(encoding="utf-8")).get(marker)
    assert body is not None, f"{page.name} lacks the generated section {marker}"
    assert body == cmd_diagram.MACHINES[machine].mermaid(), (
        f"the {machine} lifecycle in {page.name} differs from its table; paste the output of "
        f"`pausepoint diagram --machine {machine}` between the markers")


def test_a_drifted_docs_diagram_is_detected() -> None:
    """The comparison can fail: a diagram that lost an edge differs."""
    page, marker, machine = EMBEDDED[0]
    text = page.read_text(encoding="utf-8")
    body = diagram.generated_sections(text)[marker]
    drifted = diagram.splice(text, marker, body.replace("paused --> resumable", "paused --> x"))
    assert diagram.generated_sections(drifted)[marker] != cmd_diagram.MACHINES[machine].mermaid()
