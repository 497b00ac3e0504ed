"""pytest plugin: run the conformance suite inside your own test run.

::

    pytest --pausepoint-adapter=my_package.adapters:make_adapter
    pytest --pausepoint-adapter='cmd:node adapter.js' --pausepoint-vectors=vectors/

Every conformance check (and every vector, with ``--pausepoint-vectors``) becomes a test item
named ``pausepoint/<check id>``; a failure shows the clause, what was expected and what came
back; checks of clause groups the implementation does not claim are skipped as not claimed.
The terminal summary ends with the clauses that did not pass.  Without
``--pausepoint-adapter`` the plugin does nothing.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pausepoint_conformance.protocol.port import Adapter
from pausepoint_conformance.protocol.wire import HelloData
from pausepoint_conformance.suite import checks as _checks  # noqa: F401 - registers the checks
from pausepoint_conformance.suite.framework import CHECKS, CaseOutcome, CaseResult, Check, run_check

_KEY = pytest.StashKey["_Session"]()


class _Session:
    """The adapter under test (built at configure time, so a misspelled spelling is one usage
    error), its handshake (on first use) and the cases run so far."""

    def __init__(self, spec: str, timeout: float) -> None:
        from pausepoint_conformance.adapters.loader import make_adapter

        self.spec = spec
        self.adapter: Adapter | None = None
        self.adapter, _ = make_adapter(spec, timeout=timeout)
        self.hello: HelloData | str | None = None
        self.cases: list[CaseResult] = []
        self.vectors: list[Any] = []

    def open(self) -> tuple[Adapter, HelloData]:
        from pausepoint_conformance.suite.runner import handshake

        assert self.adapter is not None
        if self.hello is None:
            self.hello = handshake(self.adapter)
        if isinstance(self.hello, str):
            raise HandshakeFailed(f"pausepoint: the handshake with {self.spec} failed: "
                                  f"{self.hello}")
        return self.adapter, self.hello

    def close(self) -> None:
        if self.adapter is not None:
            self.adapter.close()
            self.adapter = None


class HandshakeFailed(RuntimeError):
    """The implementation did not complete the hello handshake: every item would fail the same
    way, so the run stops after the first."""


class ConformanceFailure(Exception):
    def __init__(self, case: CaseResult) -> None:
        super().__init__(case.message)
        self.case = case


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("pausepoint", "pausepoint conformance suite")
    group.addoption("--pausepoint-adapter", metavar="SPEC", default=None,
                    help="run the pausepoint conformance suite against this adapter: "
                         "MODULE:CALLABLE (an in-process adapter factory), cmd:\"<command>\" "
                         "(stdio protocol), reference:sqlite or reference:memory")
    group.addoption("--pausepoint-vectors", metavar="PATH", action="append", default=[],
                    help="also replay the scenario vectors in this file or directory")
    group.addoption("--pausepoint-timeout", metavar="SECONDS", type=float, default=30.0,
                    help="per-operation timeout for cmd: adapters (default 30)")


def pytest_configure(config: pytest.Config) -> None:
    """Everything the user typed is checked here, before collection: the adapter spelling (and
    its factory), the timeout and every vector path -- each problem one ``pytest.UsageError``."""
    from pausepoint_conformance.adapters.loader import AdapterSpecError
    from pausepoint_conformance.vectors.replay import VectorFileError, load_files, vector_paths

    spec = config.getoption("--pausepoint-adapter", default=None)
    vectors = config.getoption("--pausepoint-vectors", default=None) or []
    if not spec:
        if vectors:
            raise pytest.UsageError("--pausepoint-vectors needs --pausepoint-adapter (the "
                                    "implementation to replay them against)")
        return
    timeout = config.getoption("--pausepoint-timeout")
    if not timeout > 0:
        raise pytest.UsageError(f"--pausepoint-timeout must be above 0 seconds, got {timeout}")
    loaded: list[Any] = []
    for where in vectors:
        path = Path(where)
        if not path.exists():
            raise pytest.UsageError(f"--pausepoint-vectors {where}: does not exist; give a "
                                    "vector file or a folder made by `pausepoint scenarios`")
        paths = vector_paths(path)
        if not paths:
            raise pytest.UsageError(f"--pausepoint-vectors {where}: no vector files (*.json) "
                                    "there; make some with `pausepoint scenarios --out`")
        try:
            loaded.extend(load_files(paths))
        except VectorFileError as exc:
            raise pytest.UsageError(f"--pausepoint-vectors: {exc}") from None
    try:
        session = _Session(spec, timeout)
    except AdapterSpecError as exc:
        raise pytest.UsageError(f"--pausepoint-adapter: {exc}") from None
    session.vectors = loaded
    config.stash[_KEY] = session


def pytest_unconfigure(config: pytest.Config) -> None:
    session = config.stash.get(_KEY, None)
    if session is not None:
        session.close()


class ConformanceCollector(pytest.Collector):
    def collect(self) -> list[pytest.Item]:  # pragma: no cover - items are added directly
        return []


class ConformanceItem(pytest.Item):
    """One conformance check or vector."""

    def __init__(self, *, check: Check | None = None, vector: Any = None, **kw: Any) -> None:
        super().__init__(**kw)
        self.check = check
        self.vector = vector
        clauses = check.clauses if check is not None else tuple(vector.case.clauses)
        self.user_properties.append(("clauses", " ".join(clauses)))

    def runtest(self) -> None:
        from pausepoint.core.clauses import Group
        from pausepoint_conformance.vectors.replay import replay_case

        session: _Session = self.config.stash[_KEY]
        try:
            adapter, hello = session.open()
        except HandshakeFailed as exc:
            self.session.shouldfail = str(exc).splitlines()[0]
            raise
        claimed = frozenset(hello.groups) | {Group.CORE}
        if self.check is not None:
            case = run_check(adapter, self.check, claimed)
        else:
            case = replay_case(adapter, self.vector, claimed)
        session.cases.append(case)
        if case.outcome in (CaseOutcome.SKIPPED, CaseOutcome.NOT_CLAIMED):
            pytest.skip(f"{case.outcome.value}: {case.message}")
        if case.outcome in (CaseOutcome.FAILED, CaseOutcome.ERRORED):
            raise ConformanceFailure(case)

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException],
                     style: Any = None) -> str:
        if isinstance(excinfo.value, ConformanceFailure):
            c = excinfo.value.case
            if c.outcome == CaseOutcome.ERRORED:
                return f"{c.id} errored ({c.description}):\n{c.message}"
            rec = c.record()
            return (f"{c.id} failed: {c.description}\n"
                    f"  clause:   {c.failed_clause}\n"
                    f"  what:     {c.message}\n"
                    f"  expected: {json.dumps(rec.get('expected'))}\n"
                    f"  got:      {json.dumps(rec.get('got'))}")
        if isinstance(excinfo.value, HandshakeFailed):
            return str(excinfo.value)
        return str(super().repr_failure(excinfo))

    def reportinfo(self) -> tuple[str, int | None, str]:
        return ("pausepoint", None, self.name)


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config,
                                  items: list[pytest.Item]) -> None:
    """Add one item per check and per vector case, under a collector whose node id is
    ``pausepoint`` (so ids read ``pausepoint::tokens/scope``), and report them as collected
    so pytest's count says how many run.  ``tryfirst``: before ``-k``/``-m`` deselect."""
    plugin_session = config.stash.get(_KEY, None)
    if plugin_session is None:
        return
    parent = ConformanceCollector.from_parent(session, name="pausepoint", nodeid="pausepoint")
    added: list[pytest.Item] = [ConformanceItem.from_parent(parent, name=chk.id, check=chk)
                                for chk in CHECKS]
    added += [ConformanceItem.from_parent(parent, name=f"{lc.source}/{lc.id}", vector=lc)
              for lc in plugin_session.vectors]
    items.extend(added)
    config.hook.pytest_collectreport(
        report=pytest.CollectReport(parent.nodeid, "passed", None, list(added)))


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int,
                            config: pytest.Config) -> None:
    session = config.stash.get(_KEY, None)
    if session is None or not session.cases or isinstance(session.hello, str) \
            or session.hello is None:
        return
    from pausepoint.core.clauses import Group
    from pausepoint_conformance.suite.runner import Verdict, clause_verdicts

    claimed = frozenset(session.hello.groups) | {Group.CORE}
    verdicts = clause_verdicts(session.cases, claimed)
    tr = terminalreporter
    impl = session.hello.implementation
    tr.section(f"pausepoint conformance: {impl.name} {impl.version}")
    counts: dict[str, int] = {}
    for v in verdicts:
        counts[v.verdict] = counts.get(v.verdict, 0) + 1
        if v.group in {g.value for g in claimed} and v.verdict in (
                Verdict.FAILED, Verdict.ERRORED, Verdict.INCONCLUSIVE, Verdict.SKIPPED):
            tr.write_line(f"{v.verdict.upper():<13} {v.id}: {v.why}")
    tr.write_line("clauses: " + ", ".join(f"{n} {k}" for k, n in sorted(counts.items())))
