"""docs/implementers.md's Node.js adapter: the page shows the whole file, piece by piece, and
the suite passes every clause it claims (core) -- and fails a copy with one line broken, so the
passing run means something.  Needs ``node`` (skipped locally without it, failed under CI)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from pausepoint.core.clauses import Group
from pausepoint_conformance.protocol.stdio import StdioAdapter
from pausepoint_conformance.suite.framework import CaseOutcome
from pausepoint_conformance.suite.runner import Verdict, run_suite
from tools import need

ROOT = Path(__file__).resolve().parents[1]
ADAPTER = ROOT / "docs" / "node-adapter" / "adapter.js"
PAGE = ROOT / "docs" / "implementers.md"


def test_the_page_shows_the_whole_file_in_order() -> None:
    blocks = re.findall(r"```js\n(.*?)```", PAGE.read_text(encoding="utf-8"), re.DOTALL)
    source = ADAPTER.read_text(encoding="utf-8")
    assert len(blocks) >= 8
    assert "".join(b if b.endswith("\n") else b + "\n" for b in blocks).replace(
        "\n\n", "\n") == source.replace("\n\n", "\n")


def _run(script: Path) -> tuple[int, dict[str, str], list[str]]:
    node = need("node", "apt-get install nodejs")
    adapter = StdioAdapter([node, str(script)], timeout=20, start_timeout=20)
    try:
        result = run_suite(adapter, adapter_name="node-example")
    finally:
        adapter.close()
    verdicts = {v.id: v.verdict for v in result.clauses if v.group == Group.CORE.value}
    bad = [c.id for c in result.cases if c.outcome in (CaseOutcome.FAILED, CaseOutcome.ERRORED)]
    return result.exit_status, verdicts, bad


def test_the_node_adapter_passes_every_core_clause() -> None:
    status, verdicts, bad = _run(ADAPTER)
    assert not bad, bad
    assert verdicts and set(verdicts.values()) == {Verdict.PASSED}, verdicts
    assert status == 0


@pytest.mark.parametrize(("line", "broken", "clause"), [
    ('  p.phase = "consumed";', '  p.phase = "resumable";', "resume.consume.at-most-once"),
    ("  if (!fits(a.response) || !answerOk(a.response)) {", "  if (false) {",
     "resume.response.schema"),
    ("  const answerOk = INTERACTIONS[p.name].answer || (() => true);",
     "  const answerOk = () => true;", "resume.response.strict"),
])
def test_a_broken_copy_fails(tmp_path: Path, line: str, broken: str, clause: str) -> None:
    source = ADAPTER.read_text(encoding="utf-8")
    assert source.count(line) == 1
    copy = tmp_path / "broken.js"
    copy.write_text(source.replace(line, broken), encoding="utf-8")
    status, verdicts, _ = _run(copy)
    assert status == 1
    assert verdicts[clause] == Verdict.FAILED, verdicts
