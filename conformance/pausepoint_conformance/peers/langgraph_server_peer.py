"""LangGraph's Agent Server (``langgraph-api`` with the in-memory runtime
``langgraph-runtime-inmem``) behind the adapter port: the graphs of the LangGraph adapter
(:mod:`.langgraph_peer`, unchanged), served by the production server and driven over HTTP
through ``langgraph-sdk`` -- threads, runs, ``Command(resume=...)`` -- the way a deployment's
client drives it::

    pausepoint conform --adapter pausepoint_conformance.peers.langgraph_server_peer:make

**The server** runs in this process (uvicorn on ``127.0.0.1``, a free port, in a thread),
started once per process with the settings ``langgraph dev`` gives it: the in-memory runtime,
no file persistence, no LangSmith tracing, no license key, no version check.  It serves one
graph, ``pausepoint``, a factory: for each thread it builds that thread's run graph, which the
adapter registered when it started the run (the script is the user's code).  Two changes, both
disclosed on the page: the in-memory queue looks for pending runs every 5 ms instead of every
0.5 s (speed only: one worker loop, the same order), and the runtime's own ``InMemorySaver`` is
given the LangGraph adapter's failing-write hook (``checkpoint_write: "fail"``, as a full disk
would).

**What differs from the library** is only how a thread is reached: each run is a thread of its
own (a fresh UUID: the server makes thread ids), started with ``runs.stream(thread,
"pausepoint", input={})`` and resumed with ``runs.stream(thread, "pausepoint",
command={"resume": {interrupt_id: answer}})`` -- without a checkpoint id, as a client sends it,
so that the server's own per-thread queue (``multitask_strategy="enqueue"``, the default)
decides what concurrent resumes do.  The state is read with ``threads.get_state`` and
``threads.get_history``.  Every thread has the server's checkpointer, so a step without a
checkpoint cannot occur (the scoring rule skips it); the in-memory runtime keeps nothing across
a restart, so durability is not claimed and ``crash_restart`` answers skipped.  An answer the
interrupt's ``response_schema`` rejects fails the run with a ``ValidationError``, which is
refused ``response_invalid`` as the library adapter refuses it.
"""

from __future__ import annotations

import asyncio
import functools
import json
import logging
import os
import tempfile
import uuid
from collections.abc import AsyncIterator, Sequence
from typing import Any, Final

import attrs
from langchain_core.runnables import RunnableConfig
from langgraph.graph import StateGraph
from langgraph.types import Command
from langgraph_sdk import get_sync_client
from langgraph_sdk.client import SyncLangGraphClient

from pausepoint.core.clauses import ErrorCode, Group
from pausepoint_conformance.peers.base import Framework, hello, serve_on_loopback
from pausepoint_conformance.peers.langgraph_peer import (
    CheckpointWriteFailed,
    LangGraphAdapter,
    Pending,
    RunState,
    _FailingWrites,
    _Run,
)
from pausepoint_conformance.protocol.wire import (
    CrashRestartArgs,
    HelloArgs,
    HelloData,
    Refused,
    RestartData,
    Result,
    Skipped,
    Step,
)

GRAPH: Final[str] = "pausepoint"
"""The graph id the server serves: :func:`graph`, the factory of each thread's run graph."""

POLL_SECONDS: Final[float] = 0.005
"""How often the in-memory queue looks for a pending run while idle (the runtime's 0.5 s,
shortened: speed only)."""

FRAMEWORK: Final = Framework(
    "LangGraph's Agent Server", frozenset({Group.MULTI_PAUSE, Group.CONCURRENCY}),
    persistence="framework", always_checkpoints=True)
"""What the Agent Server documents: LangGraph's interrupts, a checkpointer on every thread, runs
of one thread queued (``multitask_strategy``) across many workers."""

SETTINGS: Final[dict[str, str]] = {
    "MIGRATIONS_PATH": "__inmem", "DATABASE_URI": ":memory:", "REDIS_URI": "fake",
    "LANGGRAPH_RUNTIME_EDITION": "inmem", "LANGSMITH_LANGGRAPH_API_VARIANT": "local_dev",
    "LANGSERVE_GRAPHS": json.dumps({GRAPH: f"{__name__}:graph"}),
    "LANGGRAPH_DISABLE_FILE_PERSISTENCE": "true", "LANGGRAPH_ALLOW_BLOCKING": "true",
    "LANGGRAPH_NO_VERSION_CHECK": "true", "N_JOBS_PER_WORKER": "10",
    "LANGSMITH_TRACING": "false", "LANGCHAIN_TRACING_V2": "false", "LOG_LEVEL": "WARNING",
}
"""The environment ``langgraph dev`` gives the server (``langgraph_api.cli.run_server``), with
tracing and the version check off: it runs offline, with no LangSmith key and no license."""


class ServerRunFailed(Exception):
    """A run the server reports failed: ``name`` is the exception's class, as the server
    streams it."""

    def __init__(self, name: str, message: str) -> None:
        super().__init__(f"{name}: {message}")
        self.name = name


@attrs.define
class _Server:
    """The one server of this process: its client, the run graph of each thread, and the
    (thread, node) pairs whose interrupt write fails."""

    client: SyncLangGraphClient
    graphs: dict[str, StateGraph[RunState, None, RunState, RunState]]
    failing: set[tuple[str, str]]


_GRAPHS: Final[dict[str, StateGraph[RunState, None, RunState, RunState]]] = {}
_FAILING: Final[set[tuple[str, str]]] = set()


def graph(config: RunnableConfig) -> StateGraph[RunState, None, RunState, RunState]:
    """The factory the server calls for every run and every state read: the graph of the
    config's thread."""
    return _GRAPHS[str(config.get("configurable", {})["thread_id"])]


def _shorten_poll() -> None:
    from langgraph_runtime_inmem import ops  # type: ignore[import-untyped]

    slow = ops.Runs.next

    async def poll(wait: bool, limit: int = 1) -> AsyncIterator[Any]:
        if wait:
            await asyncio.sleep(POLL_SECONDS)
        async for item in slow(False, limit):
            yield item
    ops.Runs.next = staticmethod(poll)


def _keep_files_out_of_the_working_directory() -> None:
    """The runtime keeps its operations (threads, runs) in pickle files under
    ``.langgraph_api`` of the working directory, and loads them at start: kept in a private
    temporary directory instead, the server starts empty."""
    from langgraph_runtime_inmem import database

    where = tempfile.mkdtemp(prefix="pausepoint-langgraph-api-")
    database.OPS_FILENAME = database.GLOBAL_STORE.filename = os.path.join(where, "ops.pckl")
    database.RETRY_COUNTER_FILENAME = database.GLOBAL_RETRY_COUNTER._counters.filename = (
        os.path.join(where, "retry_counter.pckl"))


def _install_failing_saver(failing: set[tuple[str, str]]) -> None:
    from langgraph_runtime_inmem import checkpoint

    class Saver(_FailingWrites, checkpoint.InMemorySaver):  # type: ignore[misc]
        pass
    saver = Saver()
    saver.failing = failing
    checkpoint.MEMORY = saver


@functools.cache
def server() -> _Server:
    """The server of this process, started at the first call."""
    for key, value in SETTINGS.items():
        os.environ[key] = value
    for name in ("langgraph_api", "langgraph_runtime_inmem"):  # runs failing on purpose
        logging.getLogger(name).setLevel(logging.CRITICAL)
    _keep_files_out_of_the_working_directory()
    _install_failing_saver(_FAILING)
    _shorten_poll()
    url, _ = serve_on_loopback("langgraph_api.server:app", "langgraph-api")
    return _Server(get_sync_client(url=url, api_key=None), _GRAPHS, _FAILING)


class LangGraphServerAdapter(LangGraphAdapter):
    """The LangGraph adapter's graphs, served by the Agent Server's in-memory runtime."""

    framework = FRAMEWORK
    scratch_prefix = "pausepoint-langgraph-api-"
    cancel_reason = ("the Agent Server cancels a thread's running run (runs.cancel), not a "
                     "paused thread, which is only ever resumed or deleted")
    clock_reason = "LangGraph interrupts have no clock on the Agent Server either"
    reconcile_reason = "the Agent Server has no effect journal"

    def __init__(self, *, scratch: str | None = None) -> None:
        self._server = server()
        self._threads: dict[str, str] = {}
        super().__init__("memory", scratch=scratch)

    def _refuse(self, exc: Exception) -> Refused | None:
        """The server reports the ``response_schema``'s rejection as a failed run with a
        ``ValidationError`` (the only validation in the graph); else the library's
        refusals."""
        if isinstance(exc, ServerRunFailed) and exc.name == "ValidationError":
            return Refused(code=ErrorCode.RESPONSE_INVALID.value,
                           message=f"the server's run failed: {exc}",
                           clause="resume.response.schema")
        return super()._refuse(exc)

    def _thread(self, run: _Run) -> str:
        return self._threads[run.run_id]

    def _define(self, run_id: str, script: Sequence[Step]) -> _Run:
        run = super()._define(run_id, script)
        thread = str(uuid.uuid4())
        self._threads[run_id] = thread
        self._server.graphs[thread] = run.graph
        self._server.failing.update((thread, node) for r, node in self._failing if r == run_id)
        self._server.client.threads.create(thread_id=thread)
        return run

    def _read(self, run: _Run, fresh: bool = False) -> tuple[Any, Any, Pending]:
        state = self._server.client.threads.get_state(self._thread(run))
        return None, state["checkpoint"], tuple(
            (t["name"], i["id"], i["value"]) for t in state["tasks"]
            for i in t.get("interrupts", []))

    def _send(self, run: _Run, handle: Any, value: Any,
              checkpoint: Any = None) -> tuple[list[dict[str, Any]], bool]:
        """A run of the thread, streamed (mode ``tasks``): ``{}`` starts it, ``None``
        continues it, a command resumes it -- on the thread's latest checkpoint, as a client
        sends it."""
        how: dict[str, Any] = ({"command": {"resume": value.resume}}
                               if isinstance(value, Command) else {"input": value})
        finished: list[dict[str, Any]] = []
        for part in self._server.client.runs.stream(self._thread(run), GRAPH,
                                                    stream_mode="tasks", **how):
            if part.event == "error":
                error = dict(part.data)
                if error.get("error") == CheckpointWriteFailed.__name__:
                    return finished, True
                raise ServerRunFailed(str(error.get("error")), str(error.get("message")))
            if part.event == "tasks" and "interrupts" in part.data:
                finished.append(dict(part.data))
        return finished, False

    def _ever(self, run: _Run) -> set[str]:
        return {i["id"] for snap in self._server.client.threads.get_history(
                    self._thread(run), limit=1000)
                for t in snap["tasks"] for i in t.get("interrupts", [])}

    def _forget(self) -> None:
        """Delete the adapter's threads from the server."""
        for thread in self._threads.values():
            self._server.client.threads.delete(thread)
            self._server.graphs.pop(thread, None)
        self._server.failing.difference_update(
            {f for f in self._server.failing if f[0] in self._threads.values()})
        self._threads = {}

    def reset(self, args: Any) -> Any:
        self._forget()
        return super().reset(args)

    def _close_store(self) -> None:
        self._forget()
        super()._close_store()

    def hello(self, args: HelloArgs) -> Result[HelloData]:
        return hello(
            name="langgraph-api (in-memory runtime)", distribution="langgraph-api",
            homepage="https://docs.langchain.com/langsmith/agent-server",
            groups=self.claimed(),
            notes="LangGraph's Agent Server, in-memory runtime, driven by langgraph-sdk: "
                  "threads, runs.stream, Command(resume={id: answer}); token = run id:"
                  "interrupt id; no expiry")

    def crash_restart(self, args: CrashRestartArgs) -> Result[RestartData]:
        return Skipped(reason="the in-memory runtime keeps nothing across a restart (the "
                              "column claims no durability)")


def make() -> LangGraphServerAdapter:
    """The Agent Server's in-memory runtime, serving the LangGraph adapter's graphs."""
    return LangGraphServerAdapter()
