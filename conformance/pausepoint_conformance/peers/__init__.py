"""Peers -- for users of other frameworks: their own pause/resume primitives behind the adapter
port, so the suite measures what each framework guarantees by itself (``docs/peers.md``).

Each peer needs its framework installed (the ``peers`` extra); importing this package does
not import any of them.  :data:`PEERS` lists them; :mod:`.matrix` measures them and writes
their matrices into the docs.
"""

from __future__ import annotations

from typing import Final

import attrs


@attrs.frozen
class Reproduction:
    """A plain-framework reproduction on a peer's page (an executed code block under the
    heading whose anchor is ``anchor``) showing the failure of the clauses ``clauses``;
    ``page``: the page holding it (from the repository root) when it is another peer's page
    (a server serving that framework's graphs fails the same way)."""

    anchor: str
    clauses: frozenset[str]
    page: str | None = None


@attrs.frozen
class Peer:
    """A framework measured by the suite: ``factory`` is the ``MODULE:CALLABLE`` spelling of
    ``pausepoint conform --adapter`` for the variant the matrix publishes, ``doc`` the page (from
    the repository root) whose generated block holds that matrix.  ``alternative``: another
    form the framework documents, ``(what it is, its factory)``, measured too, its page showing
    the clauses whose verdicts it changes; ``reproductions``: the page's reproductions, which
    the matrix names in each failing row."""

    name: str
    factory: str
    doc: str
    alternative: tuple[str, str] | None = None
    reproductions: tuple[Reproduction, ...] = ()


RACE: Final[frozenset[str]] = frozenset({
    "resume.consume.single-winner", "resume.consume.at-most-once", "effect.at-most-once"})
"""The clauses two resume servers answering one pause together fail."""

_LANGGRAPH: Final[str] = "docs/peers/langgraph.md"

PEERS: tuple[Peer, ...] = (
    Peer("LangGraph", "pausepoint_conformance.peers.langgraph_peer:make_sqlite",
         "docs/peers/langgraph.md",
         alternative=("the bare-value resume, `Command(resume=answer)`",
                      "pausepoint_conformance.peers.langgraph_peer:make_sqlite_bare"),
         reproductions=(
             Reproduction("a-stale-id-answers-the-next-question-of-its-node",
                          frozenset({"resume.consume.at-most-once"})),
             Reproduction("two-workers-both-continue-the-run",
                          RACE - {"resume.consume.at-most-once"}),
             Reproduction("nothing-bounds-or-authorises-an-answer-and-a-run-starts-twice",
                          frozenset({"input.bounded", "resume.authority", "resume.refusal.order",
                                     "resume.response.strict", "run.lifecycle.table"})),
             Reproduction("a-failed-checkpoint-write-fails-the-run",
                          frozenset({"turn.write-failed.stays-paused", "run.paused.never-error",
                                     "pause.published"})),
             Reproduction("nothing-refuses-a-pause-and-the-pause-signal-is-an-exception",
                          frozenset({"pause.interaction.registered", "pause.payload.schema",
                                     "pause.tool-call.bound", "pause.checkpoint.bound",
                                     "pause.refusal.order", "pause.refusal.before-mint",
                                     "pause.signal.base-exception"})),
         )),
    Peer("Pydantic AI", "pausepoint_conformance.peers.pydantic_ai_peer:make",
         "docs/peers/pydantic_ai.md",
         reproductions=(
             Reproduction("two-resume-servers-both-continue-the-run", RACE),
             Reproduction("the-pause-signal-is-an-exception",
                          frozenset({"pause.signal.base-exception"})),
             Reproduction("an-unregistered-question-beside-a-registered-one-is-still-asked",
                          frozenset({"pause.refusal.before-mint"})),
             Reproduction("answers-are-not-checked-nobodys-authority-is-and-a-run-id-starts-twice",
                          frozenset({"resume.response.schema", "resume.response.strict",
                                     "input.bounded", "resume.authority",
                                     "resume.refusal.order", "run.lifecycle.table"})),
         )),
    Peer("OpenAI Agents SDK", "pausepoint_conformance.peers.openai_agents_peer:make_sqlite",
         "docs/peers/openai_agents.md",
         reproductions=(
             Reproduction("two-servers-both-run-the-approved-tool", RACE),
             Reproduction("nothing-checks-a-payload-before-asking",
                          frozenset({"pause.payload.schema", "pause.refusal.order"})),
             Reproduction("an-answer-from-anyone-unbounded-and-a-run-started-twice",
                          frozenset({"resume.authority", "resume.refusal.order",
                                     "input.bounded", "run.lifecycle.table"})),
         )),
    Peer("llama-index-workflows",
         "pausepoint_conformance.peers.llama_index_workflows_peer:make_sqlite",
         "docs/peers/llama_index_workflows.md",
         reproductions=(
             Reproduction("two-resume-servers-both-continue-the-run", RACE),
             Reproduction("nothing-refuses-a-pause-and-the-pause-signal-is-an-exception",
                          frozenset({"pause.interaction.registered", "pause.payload.schema",
                                     "pause.tool-call.bound", "pause.refusal.order",
                                     "pause.refusal.before-mint",
                                     "pause.signal.base-exception"})),
             Reproduction("nothing-bounds-or-authorises-an-answer-and-a-run-starts-twice",
                          frozenset({"input.bounded", "resume.authority", "resume.refusal.order",
                                     "resume.response.strict", "run.lifecycle.table"})),
         )),
    Peer("Microsoft Agent Framework",
         "pausepoint_conformance.peers.agent_framework_peer:make_sqlite",
         "docs/peers/agent_framework.md",
         reproductions=(
             Reproduction("two-servers-both-run-the-approved-tool", RACE),
             Reproduction("a-call-of-an-unknown-function-is-not-refused",
                          frozenset({"pause.interaction.registered", "pause.refusal.order",
                                     "pause.refusal.before-mint"})),
             Reproduction("nothing-checks-a-payload-or-who-approves",
                          frozenset({"pause.payload.schema", "input.bounded",
                                     "resume.authority", "resume.refusal.order"})),
             Reproduction("a-run-id-is-started-twice", frozenset({"run.lifecycle.table"})),
         )),
    Peer("DBOS", "pausepoint_conformance.peers.dbos_peer:make", "docs/peers/dbos.md",
         reproductions=(
             Reproduction("two-clicks-are-both-accepted",
                          RACE - {"effect.at-most-once"}),
             Reproduction("nothing-checks-a-question-or-an-answer",
                          frozenset({"pause.interaction.registered", "pause.payload.schema",
                                     "pause.tool-call.bound", "pause.refusal.order",
                                     "pause.refusal.before-mint", "pause.signal.base-exception",
                                     "resume.authority", "resume.response.schema",
                                     "resume.response.strict", "resume.refusal.order",
                                     "input.bounded"})),
             Reproduction("the-pause-is-a-waiting-thread-and-nothing-unwinds",
                          frozenset({"pause.signal.single-catch"})),
             Reproduction("a-failed-write-of-the-wait-fails-the-workflow",
                          frozenset({"turn.write-failed.stays-paused", "pause.published",
                                     "run.paused.never-error", "cancel.distinct"})),
             Reproduction("a-second-start-and-a-cancel-of-a-finished-workflow-are-accepted",
                          frozenset({"run.lifecycle.table", "run.cancel.finished"})),
         )),
    Peer("LangGraph Agent Server", "pausepoint_conformance.peers.langgraph_server_peer:make",
         "docs/peers/langgraph_server.md",
         reproductions=(
             Reproduction("the-queue-runs-the-racers-one-after-another-and-tells-each-it-won",
                          frozenset({"resume.consume.at-most-once", "race.decided-once"})),
             Reproduction("nothing-bounds-or-authorises-an-answer-and-a-run-starts-twice",
                          frozenset({"input.bounded", "resume.authority", "resume.refusal.order",
                                     "resume.response.strict", "run.lifecycle.table"}),
                          page=_LANGGRAPH),
             Reproduction("a-failed-checkpoint-write-fails-the-run",
                          frozenset({"turn.write-failed.stays-paused", "run.paused.never-error",
                                     "pause.published"}), page=_LANGGRAPH),
             Reproduction("nothing-refuses-a-pause-and-the-pause-signal-is-an-exception",
                          frozenset({"pause.interaction.registered", "pause.payload.schema",
                                     "pause.tool-call.bound", "pause.refusal.order",
                                     "pause.refusal.before-mint",
                                     "pause.signal.base-exception"}), page=_LANGGRAPH),
         )),
)

GUARD_LIMITS: Final[str] = "what-the-guard-cannot-fix"
"""The heading (anchor) of a guard page's section on the clauses its guard cannot fix."""

GUARDED: tuple[Peer, ...] = (
    Peer("LangGraph + pausepoint",
         "pausepoint_conformance.peers.langgraph_peer:make_sqlite_guarded",
         "docs/guards/langgraph.md",
         reproductions=(Reproduction(GUARD_LIMITS, frozenset({
             "pause.signal.base-exception", "pause.published",
             "turn.write-failed.stays-paused", "run.paused.never-error",
             "resume.refusal.order", "expiry.transition", "run.lifecycle.table"})),)),
    Peer("OpenAI Agents SDK + pausepoint",
         "pausepoint_conformance.peers.openai_agents_peer:make_sqlite_guarded",
         "docs/guards/openai-agents.md",
         reproductions=(Reproduction(GUARD_LIMITS, frozenset({
             "pause.refusal.order", "run.lifecycle.table", "input.bounded",
             "lifecycle.refusal.no-change", "pause.payload.schema", "resume.response.schema",
             "effect.refusal.no-effect"})),)),
    Peer("Pydantic AI + pausepoint",
         "pausepoint_conformance.peers.pydantic_ai_peer:make_sqlite_guarded",
         "docs/guards/pydantic-ai.md",
         reproductions=(Reproduction(GUARD_LIMITS, frozenset({
             "pause.signal.base-exception", "input.bounded", "pause.refusal.before-mint",
             "run.lifecycle.table", "lifecycle.refusal.no-change", "pause.payload.schema",
             "resume.response.schema", "effect.refusal.no-effect"})),)),
    Peer("llama-index-workflows + pausepoint",
         "pausepoint_conformance.peers.llama_index_workflows_peer:make_sqlite_guarded",
         "docs/guards/llama-index-workflows.md",
         reproductions=(Reproduction(GUARD_LIMITS, frozenset({
             "pause.signal.base-exception", "run.lifecycle.table"})),)),
)
"""The matrix's "with pausepoint" columns: a framework measured through its own peer adapter
with its guard (:mod:`pausepoint.guards`) switched on.  Each page (``docs/guards/``) holds the
column's matrix and, under :data:`GUARD_LIMITS`, why each clause the guard cannot fix stays
failing."""
