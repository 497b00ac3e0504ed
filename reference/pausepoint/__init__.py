"""pausepoint: the interrupt contract for agent harnesses -- reference implementation.

This package's namespace is what an embedder needs, and nothing else: the contract's clauses
and its closed set of error codes, the one error type, the pause service with its request and
record types, composing a deployment on a store, clocks, the key ring and the interactions --
and the run engine: an agent written as a plain function ``agent(ctx, data)`` asks with
``ctx.ask(interaction, payload)`` (the validated answer comes back once a person answered) and
wraps each side effect in ``ctx.effect(key, fn)`` (run at most once); an :class:`Engine`
opened on a store (``memory:``, ``sqlite:PATH``, a PostgreSQL DSN) starts, resumes, cancels,
restarts, reconciles and queries its runs.
Everything else lives in the rooms below, each saying whom it is for: :mod:`pausepoint.core`
(the pure lifecycle table, clauses, canonical JSON, tokens, ports), :mod:`pausepoint.engine`,
:mod:`pausepoint.stores` and :mod:`pausepoint.system` (the model the TLA+ spec mirrors).
"""

__version__ = "0.1.0"

# -- the contract: clauses, their ids, and the closed set of error codes ----------------------
from pausepoint.core.clause_ids import ClauseId
from pausepoint.core.clauses import CLAUSES, Clause, ErrorCode, Group, Level
from pausepoint.core.errors import PausepointError

# -- the pause service, and what it takes and returns -------------------------------------------
from pausepoint.core.lifecycle import PauseState, Phase
from pausepoint.core.ports import Claims, Clock, PauseRecord, RunRecord, RunStatus, Signer
from pausepoint.core.registry import Interaction, Registry
from pausepoint.core.tokens import Ed25519Key, HmacKey, KeyRing
from pausepoint.engine.clock import ManualClock, SystemClock
from pausepoint.engine.compose import Deployment, compose

# -- the run engine's embedding API ------------------------------------------------------------
# (running an agent function that asks registered interactions and journals its effects: its
# public names are imported here, and added to __all__, which is kept sorted)
#
#     engine = pausepoint.Engine.open("sqlite:app.db", agents={"refund": refund},
#                                     interactions=[pausepoint.Interaction("approve")])
#     run = engine.start("refund", {"order": "o-1"}, run_id="run-1")   # refund(ctx, data)
#     engine.resume(run.pauses[0].token, {"approved": True})
#
# inside ``refund``: ``ctx.ask(interaction, payload)`` pauses until answered and returns the
# validated answer; ``ctx.effect(key, fn)`` runs a side effect at most once.
from pausepoint.engine.embed import Agent, Engine, RunContext, RunResult
from pausepoint.engine.service import PauseService, ResumeOutcome, ResumeRequest, RunView
from pausepoint.stores import StoreBundle, open_store

__all__ = [
    "CLAUSES",
    "Agent",
    "Claims",
    "Clause",
    "ClauseId",
    "Clock",
    "Deployment",
    "Ed25519Key",
    "Engine",
    "ErrorCode",
    "Group",
    "HmacKey",
    "Interaction",
    "KeyRing",
    "Level",
    "ManualClock",
    "PauseRecord",
    "PauseService",
    "PauseState",
    "PausepointError",
    "Phase",
    "Registry",
    "ResumeOutcome",
    "ResumeRequest",
    "RunContext",
    "RunRecord",
    "RunResult",
    "RunStatus",
    "RunView",
    "Signer",
    "StoreBundle",
    "SystemClock",
    "compose",
    "open_store",
]
