"""Tests of the stdio protocol: the committed JSON Schemas are the generated ones, real traffic
of a whole suite run fits them line by line, the server keeps stray output off the protocol,
and the minimal Node.js loop printed in ``spec/adapter-protocol.md`` runs against the suite.
"""

from __future__ import annotations

import io
import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from pydantic import BaseModel

from pausepoint_conformance.adapters.fake import FakeAdapter
from pausepoint_conformance.adapters.reference import ReferenceAdapter
from pausepoint_conformance.protocol.schemas import render, schemas
from pausepoint_conformance.protocol.stdio import StdioAdapter, handle_line, serve
from pausepoint_conformance.protocol.wire import RESPONSE_MODELS, Errored, Op
from pausepoint_conformance.suite.framework import CaseOutcome
from pausepoint_conformance.suite.runner import Plan, Verdict, run_suite
from pausepoint_conformance.vectors.generator import generate
from pausepoint_conformance.vectors.replay import LoadedCase
from tools import need

ROOT = Path(__file__).resolve().parents[1]
SCHEMAS = ROOT / "spec" / "schemas"


def test_committed_schemas_are_the_generated_ones() -> None:
    generated = schemas()
    committed = {p.name for p in SCHEMAS.glob("*.json")}
    assert committed == set(generated), (
        "regenerate: python -m pausepoint_conformance.protocol.schemas")
    for name, schema in generated.items():
        assert (SCHEMAS / name).read_text(encoding="utf-8") == render(schema), (
            f"spec/schemas/{name} is stale; regenerate with "
            "python -m pausepoint_conformance.protocol.schemas spec/schemas")
        jsonschema.Draft202012Validator.check_schema(schema)


def _validator(name: str) -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator(json.loads((SCHEMAS / name).read_text()))


class LoopbackAdapter(StdioAdapter):
    """The suite's stdio client, with the wire replaced by a loop through :func:`handle_line`
    of an in-process implementation -- every request and response line is validated against
    the published schemas on the way."""

    def __init__(self, inner: Any) -> None:
        super().__init__(["loopback"])
        self.inner = inner
        self.requests = _validator("adapter-request.json")
        self.responses = {op: _validator(f"adapter-response-{op.value.replace('_', '-')}.json")
                          for op in Op}
        self.ops: Counter[str] = Counter()

    def _call(self, op: Op, args: BaseModel) -> Any:
        self._next_id += 1
        line = json.dumps({"id": self._next_id, "op": op.value,
                           "args": args.model_dump(mode="json")})
        self.requests.validate(json.loads(line))
        response, parsed = handle_line(self.inner, line)
        assert parsed == op
        wire = json.loads(json.dumps(response))
        self.responses[op].validate(wire)
        self.ops[op.value] += 1
        return RESPONSE_MODELS[op].model_validate(wire).result  # type: ignore[attr-defined]

    def hello(self, args: Any) -> Any:
        return self._call(Op.HELLO, args)

    def close(self) -> None:
        self.inner.close()


def test_a_whole_run_fits_the_published_schemas_line_by_line() -> None:
    adapter = LoopbackAdapter(ReferenceAdapter("memory"))
    cases = [LoadedCase(c, vf.ttl_ms, name) for name, vf in
             generate(depth=1, random=10, seed=1).items() for c in vf.cases]
    result = run_suite(adapter, adapter_name="loopback", plan=Plan(vectors=tuple(cases)))
    adapter.close()
    assert result.exit_status == 0, [v.record() for v in result.clauses
                                     if v.verdict not in (Verdict.PASSED, Verdict.NOT_CLAIMED)]
    assert set(adapter.ops) == {op.value for op in Op} - {"bye"}, adapter.ops


def test_the_response_schema_rejects_a_bad_response() -> None:
    v = _validator("adapter-response-start.json")
    assert v.is_valid({"id": 1, "result": {"status": "skipped", "reason": "later"}})
    assert not v.is_valid({"id": 1, "result": {"status": "maybe"}})
    assert not v.is_valid({"id": 1, "result": {"status": "ok", "data": {"status": "paused"}}})


def test_serve_keeps_stray_prints_off_the_protocol(capsys: pytest.CaptureFixture[str]) -> None:
    lines = [
        {"id": 1, "op": "hello", "args": {"protocol": 1, "suite": "t"}},
        {"id": 2, "op": "reset", "args": {"ttl_ms": 1000}},
        {"id": 3, "op": "start", "args": {"run_id": "r1", "session_id": "s", "scope": "c",
                                          "script": [{"op": "interrupt", "name": "approve"},
                                                     {"op": "end"}]}},
        {"id": 4, "op": "bye", "args": {}},
        {"id": 5, "op": "reset", "args": {"ttl_ms": 1000}},  # after bye: never answered
    ]
    out = io.StringIO()
    serve(FakeAdapter(print_on=["start"]),
          io.StringIO("\n".join(json.dumps(x) for x in lines) + "\n"), out)
    answers = [json.loads(line) for line in out.getvalue().splitlines()]
    assert [a["id"] for a in answers] == [1, 2, 3, 4]
    assert answers[2]["result"]["data"]["status"] == "paused"
    assert "a stray print" in capsys.readouterr().err


def test_a_malformed_request_is_answered_not_crashed() -> None:
    """A line that is not JSON is a protocol_invalid refusal (spec/adapter-protocol.md,
    Limits); a request naming no operation, or with invalid arguments, is errored."""
    out = io.StringIO()
    serve(ReferenceAdapter("memory"), io.StringIO('not json\n{"id": 9, "op": "nope"}\n'
                                                  '{"id": 10, "op": "reset", "args": {}}\n'),
          out)
    answers = [json.loads(line) for line in out.getvalue().splitlines()]
    assert [a["id"] for a in answers] == [-1, 9, 10]
    assert answers[0]["result"]["status"] == "refused"
    assert answers[0]["result"]["code"] == "protocol_invalid"
    assert all(a["result"]["status"] == "errored" for a in answers[1:])
    assert all(Errored.model_validate(a["result"]).traceback for a in answers[1:])


def test_the_reference_over_stdio_says_hello() -> None:
    import sys

    adapter = StdioAdapter([sys.executable, "-m", "pausepoint_conformance.adapters.stdio_reference",
                            "--store", "memory"])
    try:
        from pausepoint_conformance.suite.runner import handshake

        hello = handshake(adapter)
        assert not isinstance(hello, str), hello
        assert hello.protocol == 1 and "core" in hello.groups
        assert adapter.spawns == 1
    finally:
        adapter.close()


def _node_example() -> str:
    text = (ROOT / "spec" / "adapter-protocol.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```js\n(.*?)```", text, re.DOTALL)
    assert len(blocks) == 1, "the protocol spec shows exactly one Node.js loop"
    return blocks[0]


def test_the_spec_shows_the_loop_in_about_30_lines() -> None:
    code = [line for line in _node_example().splitlines() if line.strip()]
    assert 20 <= len(code) <= 40, len(code)


def test_the_node_loop_from_the_spec_runs_and_passes_nothing(tmp_path: Path) -> None:
    script = tmp_path / "minimal-adapter.js"
    script.write_text(_node_example(), encoding="utf-8")
    node = need("node", "apt-get install nodejs")
    adapter = StdioAdapter([node, str(script)], timeout=20)
    try:
        result = run_suite(adapter, adapter_name="node")
    finally:
        adapter.close()
    assert result.header["implementation"]["name"] == "my-harness"
    assert result.header["claimed"] == ["core"]
    outcomes = Counter(c.outcome for c in result.cases)
    assert set(outcomes) == {CaseOutcome.SKIPPED, CaseOutcome.NOT_CLAIMED}, outcomes
    assert all("is not implemented yet" in c.message for c in result.cases
               if c.outcome == CaseOutcome.SKIPPED)
    assert Verdict.PASSED not in {v.verdict for v in result.clauses}
    assert result.exit_status == 1
