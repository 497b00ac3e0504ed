"""What the peer adapters' tests share: a peer's measurement (a peer of
:data:`pausepoint_conformance.peers.PEERS`, as published or in a variant of its module), read
clause by clause, and a peer adapter driven the way the checks drive it (session ``s``, scope
``x``)."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from typing import Any, TypeVar

import attrs
import pytest

from pausepoint_conformance.peers import PEERS, matrix
from pausepoint_conformance.peers.base import StoredPeerAdapter
from pausepoint_conformance.protocol.port import Adapter
from pausepoint_conformance.protocol.wire import (
    EffectCountArgs,
    Ok,
    PauseStateArgs,
    PublishedPause,
    ResetArgs,
    ResumeArgs,
    RunReport,
    StartArgs,
    Step,
)
from pausepoint_conformance.suite.framework import YES, end
from pausepoint_conformance.suite.runner import SuiteResult
from scratch import fast_tempfiles, fast_tmpdir

A = TypeVar("A", bound=StoredPeerAdapter)

# -- a peer's measurement --------------------------------------------------------------------


def measured(name: str, factory: str | None = None) -> Any:
    """A module-scoped fixture: the measurement of the peer of ``PEERS`` called ``name`` -- as
    published, or made by the callable ``factory`` of the same module (``"make"``: the state in
    memory) --, its SQLite files on a RAM disk if the machine has one."""
    (peer,) = [p for p in PEERS if p.name == name]
    if factory is not None:
        module, _, _ = peer.factory.partition(":")
        peer = attrs.evolve(peer, factory=f"{module}:{factory}")

    @pytest.fixture(scope="module")
    def measurement() -> Iterator[SuiteResult]:
        with fast_tempfiles():
            yield matrix.measure(peer)
    return measurement


def having(result: SuiteResult, verdict: str) -> set[str]:
    """The clauses with the verdict ``verdict``."""
    return {v.id for v in result.clauses if v.verdict == verdict}


def why(result: SuiteResult, clause_id: str) -> str:
    """The reason given for a clause's verdict."""
    return next(v.why for v in result.clauses if v.id == clause_id)


# -- a peer adapter, driven by hand ----------------------------------------------------------


def adapters(cls: type[A], *stores: str) -> Any:
    """A fixture: a ``cls`` adapter for each of ``stores`` (its files on a RAM disk if the
    machine has one), closed after the test."""
    @pytest.fixture(params=stores)
    def adapter(request: pytest.FixtureRequest) -> Iterator[A]:
        made = cls(request.param, scratch=fast_tmpdir())
        try:
            yield made
        finally:
            made.close()
    return adapter


def started(adapter: Adapter, run_id: str, *steps: Step) -> RunReport:
    """The adapter reset and the run ``run_id`` started on ``steps`` (and the end)."""
    assert isinstance(adapter.reset(ResetArgs(ttl_ms=60_000)), Ok)
    res = adapter.start(StartArgs(run_id=run_id, session_id="s", scope="x",
                                  script=[*steps, end()]))
    assert isinstance(res, Ok), res
    report: RunReport = res.data
    return report


def answer(p: PublishedPause, response: Any = YES, responder: str = "person") -> ResumeArgs:
    """A resume of ``p`` with ``response``, from ``responder``."""
    return ResumeArgs(token=p.token, response=response, run_id=p.run_id, session_id="s",
                      scope="x", responder=responder)


def count(adapter: Adapter, run_id: str, key: str) -> int:
    """How many times the run ``run_id`` applied the effect ``key``."""
    res = adapter.effect_count(EffectCountArgs(run_id=run_id, key=key))
    assert isinstance(res, Ok)
    n: int = res.data.count
    return n


def phase(adapter: Adapter, interrupt_id: str) -> str:
    """The adapter's ``pause_state`` of a pause."""
    res = adapter.pause_state(PauseStateArgs(interrupt_id=interrupt_id))
    assert isinstance(res, Ok), res
    return str(res.data.phase)


def no_network(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """Every socket connection refused from now on (for the test's rest); the addresses tried
    are collected in the list returned."""
    tried: list[object] = []

    def refuse(self: socket.socket, address: object) -> None:
        tried.append(address)
        raise OSError("no network in this test")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket.socket, "connect_ex", refuse)
    return tried
