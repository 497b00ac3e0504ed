"""The stdio protocol: both ends.

* :func:`serve` exposes any in-process :class:`~pausepoint_conformance.protocol.port.Adapter` on
  stdin/stdout (one JSON request per line in, one JSON response per line out) -- this is how the
  reference is offered over the wire
  (``python -m pausepoint_conformance.adapters.stdio_reference``).
* :class:`StdioAdapter` is the suite's side: it starts the implementation as a subprocess
  (``--adapter cmd:"<command line>"``), performs the ``hello`` handshake, and turns every
  transport failure -- the process exiting, a hang past the timeout, a line that is not JSON or
  not the expected message -- into an ``errored`` result, never into a pass.  After such a
  failure the process is killed and the next ``reset`` starts a fresh one.

Both ends bound what they read (``spec/adapter-protocol.md``, "Limits"): a line is at most
:data:`MAX_LINE_BYTES` bytes and nested at most :data:`MAX_LINE_DEPTH` arrays/objects deep
(:func:`line_problem` measures it without recursing), and it is parsed strictly (no duplicate
keys, no ``NaN``).  A violation is a ``protocol_invalid`` refusal on the implementation's side
and a transport failure (``errored``, the process killed) on the suite's side -- never a
``RecursionError``.  Nothing runs before a successful ``hello``; a failed ``hello`` ends the
implementation's process.
"""

from __future__ import annotations

import json
import os
import queue
import re
import shlex
import subprocess
import sys
import tempfile
import threading
import time
from typing import IO, Any, cast

from pydantic import BaseModel, ValidationError

from pausepoint.core.canonical import loads_strict
from pausepoint.core.clauses import ErrorCode
from pausepoint_conformance import __version__ as suite_version
from pausepoint_conformance.protocol.port import Adapter, errored_from, optional_op
from pausepoint_conformance.protocol.wire import (
    OPS,
    OPTIONAL_OPS,
    PROTOCOL_VERSION,
    RESPONSE_MODELS,
    AdvanceClockArgs,
    ByeArgs,
    CancelArgs,
    CancelData,
    ClockData,
    CountData,
    CrashRestartArgs,
    EffectCountArgs,
    Empty,
    Errored,
    HelloArgs,
    HelloData,
    InterleaveArgs,
    InterleaveData,
    KeyData,
    Ok,
    Op,
    PauseStateArgs,
    PhaseData,
    RaceData,
    RaceResumeArgs,
    ReconcileArgs,
    Refused,
    ResetArgs,
    RestartData,
    Result,
    ResumeArgs,
    ResumeData,
    RetireKeyArgs,
    RotateKeyArgs,
    RunReport,
    Skipped,
    StartArgs,
    StatusArgs,
    StatusData,
    WiringArgs,
    WiringData,
)

MAX_LINE_BYTES = 4 * 1024 * 1024
"""Longest line either end reads, in bytes of UTF-8, the newline excluded."""
MAX_LINE_DEPTH = 64
"""Deepest nesting of a line: the most arrays and objects open at once ("depth" below)."""

_STRINGS = re.compile(r'"(?:[^"\\]|\\.)*"')
_BRACKETS = re.compile(r"[\[\]{}]")


def line_problem(line: str | bytes) -> str | None:
    """Why ``line`` breaks the protocol's limits, or None.  Its *depth* is the greatest number
    of arrays and objects open at any point of the text outside strings: ``1`` and ``"a"`` have
    depth 0, ``{}`` and ``[]`` depth 1, ``{"a":[1]}`` depth 2.  Linear, no recursion."""
    raw = line.encode("utf-8", "surrogatepass") if isinstance(line, str) else line
    if len(raw.rstrip(b"\r\n")) > MAX_LINE_BYTES:
        return f"the line is longer than {MAX_LINE_BYTES} bytes"
    text = raw.decode("utf-8", "replace")
    depth = deepest = 0
    for m in _BRACKETS.finditer(_STRINGS.sub("", text)):
        if m.group() in "[{":
            depth += 1
            deepest = max(deepest, depth)
            if deepest > MAX_LINE_DEPTH:
                return f"the line is nested deeper than {MAX_LINE_DEPTH} levels"
        else:
            depth -= 1
    return None


def protocol_refusal(why: str) -> Refused:
    return Refused(code=ErrorCode.PROTOCOL_INVALID.value, message=why, clause="input.bounded")

# -- the implementation's side ---------------------------------------------------------------


def _dispatch(adapter: Adapter, op: Op, args: BaseModel) -> Any:
    if op == Op.BYE:
        return Ok(data=Empty())
    if isinstance(args, HelloArgs) and args.protocol != PROTOCOL_VERSION:
        return protocol_refusal(f"this implementation speaks protocol {PROTOCOL_VERSION}, "
                                f"not {args.protocol}")
    method = optional_op(adapter, op.value)
    if method is None and op in OPTIONAL_OPS:
        return Skipped(reason=f"this implementation does not offer the optional operation "
                              f"{op.value}")
    if method is None:
        raise AttributeError(f"the adapter has no {op.value} operation")
    return method(args)


def handle_line(adapter: Adapter, line: str,
                greeted: bool = True) -> tuple[dict[str, Any], Op | None]:
    """Answer one request line: the response object and the operation it named (None when the
    line was not a request).  A line past the limits, not strict JSON, or -- unless
    ``greeted`` -- anything but ``hello`` is refused with ``protocol_invalid`` and runs
    nothing.  While the operation runs, ``sys.stdout`` points at stderr, so a stray ``print``
    cannot corrupt the protocol."""
    rid: int = -1
    op: Op | None = None
    problem = line_problem(line)
    if problem is not None:
        return {"id": rid, "result": protocol_refusal(problem).model_dump(mode="json")}, None
    try:
        raw = loads_strict(line)
    except ValueError as exc:
        return {"id": rid, "result": protocol_refusal(f"not strict JSON: {exc}")
                .model_dump(mode="json")}, None
    try:
        if not isinstance(raw, dict):
            raise TypeError("a request is a JSON object")
        rid = int(raw.get("id", -1))
        op = Op(raw["op"])
        args = OPS[op][0].model_validate(raw.get("args", {}))
    except (ValueError, KeyError, TypeError, ValidationError) as exc:
        result: Any = errored_from(exc)
    else:
        if not greeted and op is not Op.HELLO:
            refusal = protocol_refusal(f"{op.value} before a successful hello handshake")
            return {"id": rid, "result": refusal.model_dump(mode="json")}, op
        real_stdout = sys.stdout
        sys.stdout = sys.stderr
        try:
            result = _dispatch(adapter, op, args)
        except Exception as exc:
            result = errored_from(exc)
        finally:
            sys.stdout = real_stdout
    return {"id": rid, "result": result.model_dump(mode="json")}, op


def serve(adapter: Adapter, instream: IO[str] | None = None,
          outstream: IO[str] | None = None) -> int:
    """Answer requests from ``instream`` (default stdin) on ``outstream`` (default stdout) until
    ``bye`` or end of input, then close the adapter."""
    inp = instream if instream is not None else sys.stdin
    out = outstream if outstream is not None else sys.stdout
    greeted = False
    status = 0
    try:
        while True:
            line = inp.readline(MAX_LINE_BYTES + 2)
            if not line:
                break
            if not line.endswith("\n") and len(line) > MAX_LINE_BYTES:
                while (rest := inp.readline(MAX_LINE_BYTES)) and not rest.endswith("\n"):
                    pass  # drop the rest of the over-long line, bounded memory
                line = line + "\n"  # the length check below refuses it
            if not line.strip():
                continue
            response, op = handle_line(adapter, line, greeted)
            out.write(json.dumps(response, separators=(",", ":")) + "\n")
            out.flush()
            if op == Op.HELLO:
                if not _handshake_ok(response):
                    status = 1  # a failed handshake ends the process (nothing runs after it)
                    break
                greeted = True
            if op == Op.BYE:
                break
    finally:
        adapter.close()
    return status


def _handshake_ok(response: dict[str, Any]) -> bool:
    result = response.get("result", {})
    return bool(result.get("status") == "ok"
                and result.get("data", {}).get("protocol") == PROTOCOL_VERSION)


# -- the suite's side ------------------------------------------------------------------------


class _Process:
    def __init__(self, argv: list[str], env: dict[str, str] | None, cwd: str | None) -> None:
        # open for the process's whole life (its stderr tail is read on failures); close() ends it
        self.stderr = tempfile.TemporaryFile()  # noqa: SIM115
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=self.stderr, env=env, cwd=cwd, bufsize=0)
        self.lines: queue.Queue[bytes | None] = queue.Queue()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        try:
            while True:
                line = self.proc.stdout.readline(MAX_LINE_BYTES + 2)
                if not line:
                    break
                self.lines.put(line)
                if not line.endswith(b"\n") and len(line) > MAX_LINE_BYTES:
                    break  # over-long: the exchange refuses it and kills the process
        except (OSError, ValueError):
            pass
        self.lines.put(None)
        try:
            self.proc.stdout.close()
        except OSError:
            pass

    def stderr_tail(self, n: int = 2000) -> str:
        try:
            self.stderr.seek(0, os.SEEK_END)
            size = self.stderr.tell()
            self.stderr.seek(max(0, size - n))
            return self.stderr.read().decode("utf-8", "replace")
        except (OSError, ValueError):
            return ""

    def kill(self) -> str:
        """Kill the process (if it still runs), release everything; return its stderr tail."""
        if self.proc.poll() is None:
            self.proc.kill()
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:  # pragma: no cover
            pass
        tail = self.stderr_tail()
        try:
            if self.proc.stdin is not None:
                self.proc.stdin.close()
        except OSError:
            pass
        # Only the reader closes stdout, once it has seen the end of it: closing it under a
        # reader still inside read() would free the descriptor number for the next process's
        # pipe, and the stale reader would steal that process's bytes.
        self.reader.join(timeout=5)
        self.stderr.close()
        return tail


class TransportError(Exception):
    """The conversation with the implementation broke (the process is killed)."""


class StdioAdapter:
    """Drive an implementation that speaks the protocol on its stdin/stdout.

    ``timeout`` bounds every operation (seconds); ``start_timeout`` bounds the handshake (a cold
    interpreter may take a while)."""

    def __init__(self, command: str | list[str], *, timeout: float = 30.0,
                 start_timeout: float = 60.0, env: dict[str, str] | None = None,
                 cwd: str | None = None) -> None:
        self.argv = shlex.split(command) if isinstance(command, str) else list(command)
        if not self.argv:
            raise ValueError("an empty command line")
        self.timeout = timeout
        self.start_timeout = start_timeout
        self.env = env
        self.cwd = cwd
        self._p: _Process | None = None
        self._next_id = 0
        self._hello: HelloData | None = None
        self.spawns = 0

    # -- transport ---------------------------------------------------------------------------

    def _spawn(self) -> None:
        self._p = _Process(self.argv, self.env, self.cwd)
        self.spawns += 1
        hello = self._exchange(Op.HELLO, HelloArgs(protocol=PROTOCOL_VERSION,
                                                   suite=f"pausepoint-conformance {suite_version}"),
                               self.start_timeout)
        if not isinstance(hello, Ok):  # a failed handshake ends the process: nothing runs
            raise self._fail(f"the hello handshake did not succeed: {hello!r}")
        data = cast(HelloData, hello.data)
        if data.protocol != PROTOCOL_VERSION:
            raise self._fail(f"the implementation speaks protocol {data.protocol}, the suite "
                             f"speaks {PROTOCOL_VERSION}")
        self._hello = data

    def _fail(self, why: str) -> TransportError:
        p, self._p = self._p, None
        tail = ""
        if p is not None:
            code = p.proc.poll()
            tail = p.kill()
            code = p.proc.returncode if code is None else code
            why += f" (exit status {code})"
        if tail:
            why += "\n--- stderr (last lines) ---\n" + tail
        return TransportError(why)

    def _exchange(self, op: Op, args: BaseModel, timeout: float) -> Any:
        p = self._p
        assert p is not None
        self._next_id += 1
        rid = self._next_id
        line = json.dumps({"id": rid, "op": op.value, "args": args.model_dump(mode="json")},
                          separators=(",", ":")) + "\n"
        try:
            assert p.proc.stdin is not None
            p.proc.stdin.write(line.encode("utf-8"))
            p.proc.stdin.flush()
        except (BrokenPipeError, OSError, ValueError) as exc:
            raise self._fail(f"could not send {op.value}: {exc}") from None
        deadline = time.monotonic() + timeout
        try:
            got = p.lines.get(timeout=max(0.0, deadline - time.monotonic()))
        except queue.Empty:
            raise self._fail(f"no response to {op.value} within {timeout:g} s (hang)") from None
        if got is None:
            raise self._fail(f"the implementation exited during {op.value}")
        problem = line_problem(got)
        if problem is not None:
            raise self._fail(f"{ErrorCode.PROTOCOL_INVALID.value}: in answer to {op.value}, "
                             f"{problem}")
        try:
            raw = loads_strict(got)
        except ValueError:
            raise self._fail(f"garbage on stdout in answer to {op.value}: "
                             f"{got[:200]!r}") from None
        if not isinstance(raw, dict) or raw.get("id") != rid:
            got_id = raw.get("id") if isinstance(raw, dict) else None
            raise self._fail(f"response to {op.value} has id {got_id!r}, expected {rid}")
        try:
            return RESPONSE_MODELS[op].model_validate(raw).result  # type: ignore[attr-defined]
        except ValidationError as exc:
            return Errored(traceback=f"the response to {op.value} is not a valid message:\n{exc}"
                                     f"\nreceived: {got[:2000]!r}")

    def _call(self, op: Op, args: BaseModel) -> Any:
        try:
            if self._p is None:
                self._spawn()
            return self._exchange(op, args, self.timeout)
        except TransportError as exc:
            return Errored(traceback=str(exc))
        except OSError as exc:  # the command cannot be started
            self._p = None
            return errored_from(exc)

    # -- the port ----------------------------------------------------------------------------

    def hello(self, args: HelloArgs) -> Result[HelloData]:
        try:
            if self._p is None:
                self._spawn()
        except TransportError as exc:
            return Errored(traceback=str(exc))
        except OSError as exc:
            self._p = None
            return errored_from(exc)
        assert self._hello is not None
        return Ok(data=self._hello)

    def reset(self, args: ResetArgs) -> Result[Empty]:
        return cast("Result[Empty]", self._call(Op.RESET, args))

    def start(self, args: StartArgs) -> Result[RunReport]:
        return cast("Result[RunReport]", self._call(Op.START, args))

    def resume(self, args: ResumeArgs) -> Result[ResumeData]:
        return cast("Result[ResumeData]", self._call(Op.RESUME, args))

    def cancel(self, args: CancelArgs) -> Result[CancelData]:
        return cast("Result[CancelData]", self._call(Op.CANCEL, args))

    def advance_clock(self, args: AdvanceClockArgs) -> Result[ClockData]:
        return cast("Result[ClockData]", self._call(Op.ADVANCE_CLOCK, args))

    def crash_restart(self, args: CrashRestartArgs) -> Result[RestartData]:
        return cast("Result[RestartData]", self._call(Op.CRASH_RESTART, args))

    def reconcile(self, args: ReconcileArgs) -> Result[PhaseData]:
        return cast("Result[PhaseData]", self._call(Op.RECONCILE, args))

    def pause_state(self, args: PauseStateArgs) -> Result[PhaseData]:
        return cast("Result[PhaseData]", self._call(Op.PAUSE_STATE, args))

    def effect_count(self, args: EffectCountArgs) -> Result[CountData]:
        return cast("Result[CountData]", self._call(Op.EFFECT_COUNT, args))

    def race_resume(self, args: RaceResumeArgs) -> Result[RaceData]:
        return cast("Result[RaceData]", self._call(Op.RACE_RESUME, args))

    def status(self, args: StatusArgs) -> Result[StatusData]:
        return cast("Result[StatusData]", self._call(Op.STATUS, args))

    def rotate_key(self, args: RotateKeyArgs) -> Result[KeyData]:
        return cast("Result[KeyData]", self._call(Op.ROTATE_KEY, args))

    def retire_key(self, args: RetireKeyArgs) -> Result[Empty]:
        return cast("Result[Empty]", self._call(Op.RETIRE_KEY, args))

    def wiring(self, args: WiringArgs) -> Result[WiringData]:
        return cast("Result[WiringData]", self._call(Op.WIRING, args))

    def interleave(self, args: InterleaveArgs) -> Result[InterleaveData]:
        return cast("Result[InterleaveData]", self._call(Op.INTERLEAVE, args))

    def close(self) -> None:
        p = self._p
        if p is None:
            return
        try:
            self._exchange(Op.BYE, ByeArgs(), min(self.timeout, 5.0))
        except TransportError:
            return
        self._p = None
        try:
            p.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pass
        p.kill()
