"""The scoring rule of ``docs/peers.md`` is one piece of code, and every peer is scored by it:
a fake framework's verdicts show what the rule decides, and every peer of ``PEERS`` takes its
claims and its skipped steps from it, unchanged."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from pausepoint.core.clauses import Group
from pausepoint.core.script import Fault
from pausepoint_conformance.adapters.loader import load_factory
from pausepoint_conformance.peers import PEERS, Peer
from pausepoint_conformance.peers.base import (
    Framework,
    PeerAdapter,
    StoredPeerAdapter,
    claims,
    unrealisable,
)
from pausepoint_conformance.protocol.wire import (
    PROTOCOL_VERSION,
    Handlers,
    HelloArgs,
    Ok,
    ResetArgs,
    Skipped,
    StartArgs,
    Step,
)
from pausepoint_conformance.suite.framework import ask, effect, end
from scratch import fast_tempfiles

TOOLS = frozenset({"pay"})
APP = Framework("App", frozenset({Group.MULTI_PAUSE}), persistence="application",
                tool_call_ids=True, user_code_at_pause=False)
LIB = Framework("Lib", frozenset(), persistence="framework")


def test_a_group_is_claimed_when_documented_and_durability_with_a_file() -> None:
    assert claims(APP, durable=False) == [Group.CORE, Group.MULTI_PAUSE]
    assert claims(LIB, durable=True) == [Group.CORE, Group.DURABILITY]
    assert claims(LIB, durable=False) == [Group.CORE]


@pytest.mark.parametrize(("step", "app", "lib"), [
    (ask("approve"), None, None),
    (effect("a"), None, None),
    (effect("a", Fault.CRASH_BEFORE_APPLY), "no effect journal", "no effect journal"),
    (ask("approve", checkpoint="none"), "application's code", None),
    (ask("approve", checkpoint_write="fail"), "application's code", None),
    (ask("pay", {"amount": 1}), "tool call", None),
    (ask("pay", {"amount": 1}, tool_call_id="c1"), None, None),
    (ask("approve", handlers=Handlers(catch_all="h")), "no user code", None),
])
def test_a_step_is_skipped_only_when_the_framework_makes_it_impossible(
        step: Step, app: str | None, lib: str | None) -> None:
    for framework, want in ((APP, app), (LIB, lib)):
        got = unrealisable(framework, step, TOOLS)
        assert (got is None) == (want is None), (framework.name, step, got)
        if want is not None and got is not None:
            assert want in got and framework.name in got


class _Fake(PeerAdapter):
    framework = APP
    cancel_reason = clock_reason = reconcile_reason = "none"

    def _resume(self, *args: object, **kwargs: object) -> Skipped:
        return Skipped(reason="never reached")


def test_an_adapter_skips_by_the_rule_up_to_the_script_end() -> None:
    fake = _Fake()
    assert fake.claimed() == claims(APP, durable=False)
    assert fake.skipped([ask("approve"), end()]) is None
    assert fake.skipped([ask("approve"), end(), ask("approve", checkpoint="none")]) is None
    got = fake.skipped([effect("a"), ask("approve", checkpoint="none"), end()])
    assert got == Skipped(reason=str(unrealisable(APP, ask("approve", checkpoint="none"), TOOLS)))


@pytest.fixture(scope="module", params=PEERS, ids=[p.name for p in PEERS])
def peer(request: pytest.FixtureRequest) -> Iterator[tuple[Peer, Any]]:
    with fast_tempfiles():
        adapter = load_factory(request.param.factory)()
        assert isinstance(adapter, PeerAdapter)
        try:
            yield request.param, adapter
        finally:
            adapter.close()


def test_every_peer_claims_by_the_rule(peer: tuple[Peer, Any]) -> None:
    _, adapter = peer
    cls = type(adapter)
    assert isinstance(cls.framework, Framework)
    assert cls.claimed is PeerAdapter.claimed and cls.skipped is PeerAdapter.skipped
    hello = adapter.hello(HelloArgs(protocol=PROTOCOL_VERSION, suite="test"))
    assert isinstance(hello, Ok)
    durable = isinstance(adapter, StoredPeerAdapter) and adapter.store == "sqlite"
    assert hello.data.groups == claims(cls.framework, durable=durable)


@pytest.mark.parametrize("step", [
    effect("a", Fault.CRASH_AFTER_APPLY), ask("approve", checkpoint="none"),
    ask("approve", checkpoint_write="fail"), ask("pay", {"amount": 1}),
    ask("approve", handlers=Handlers(catch_all="h"))])
def test_every_peer_skips_exactly_what_the_rule_skips(
        peer: tuple[Peer, Any], step: Step) -> None:
    _, adapter = peer
    assert isinstance(adapter.reset(ResetArgs(ttl_ms=1000)), Ok)
    reason = unrealisable(adapter.framework, step, TOOLS)
    got = adapter.start(StartArgs(run_id="r1", session_id="s", scope="x",
                                  script=[effect("a"), step, end()]))
    if reason is None:
        assert not isinstance(got, Skipped), got
    else:
        assert got == Skipped(reason=reason)


def test_a_framework_giving_every_run_a_checkpointer_skips_only_a_pause_without_one() -> None:
    srv = Framework("Srv", frozenset(), persistence="framework", always_checkpoints=True)
    got = unrealisable(srv, ask("approve", checkpoint="none"), TOOLS)
    assert got is not None and "Srv gives every run a checkpointer" in got
    assert unrealisable(srv, ask("approve", checkpoint_write="fail"), TOOLS) is None
    assert unrealisable(LIB, ask("approve", checkpoint="none"), TOOLS) is None
