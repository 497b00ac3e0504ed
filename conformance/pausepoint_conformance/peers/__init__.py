"""Peers -- for users of other frameworks: their own pause/resume primitives behind the adapter
port, so the suite measures what each framework guarantees by itself (``docs/peers.md``).

Each peer needs its framework installed (the ``peers`` extra); importing this package does
not import any of them.  :data:`PEERS` lists them; :mod:`.matrix` measures them and writes
their matrices into the docs.
"""

from __future__ import annotations

import attrs


@attrs.frozen
class Peer:
    """A framework measured by the suite: ``factory`` is the ``MODULE:CALLABLE`` spelling of
    ``pausepoint conform --adapter`` for the variant the matrix publishes, ``doc`` the page (from
    the repository root) whose generated block holds that matrix."""

    name: str
    factory: str
    doc: str


PEERS: tuple[Peer, ...] = (
    Peer("LangGraph", "pausepoint_conformance.peers.langgraph_peer:make_sqlite",
         "docs/peers/langgraph.md"),
    Peer("Pydantic AI", "pausepoint_conformance.peers.pydantic_ai_peer:make",
         "docs/peers/pydantic_ai.md"),
    Peer("OpenAI Agents SDK", "pausepoint_conformance.peers.openai_agents_peer:make_sqlite",
         "docs/peers/openai_agents.md"),
    Peer("llama-index-workflows",
         "pausepoint_conformance.peers.llama_index_workflows_peer:make_sqlite",
         "docs/peers/llama_index_workflows.md"),
)
