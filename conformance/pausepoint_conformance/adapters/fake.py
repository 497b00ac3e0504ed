"""A scriptable fake implementation, to test the runner itself (Bowtie's ``envsonschema``).

It speaks the stdio protocol in front of the reference (in memory) and can be told to
misbehave at the transport or at the contract::

    python -m pausepoint_conformance.adapters.fake [--crash-on OP[:N]] [--hang-on OP[:N]]
        [--garbage-on OP[:N]] [--wrong-id-on OP[:N]] [--invalid-on OP[:N]]
        [--skip OP] [--claim GROUPS] [--protocol N] [--noise] [--print-on OP]
        [--accept-every-resume] [--refuse-every-resume] [--store memory|sqlite]

* ``--crash-on OP[:N]`` -- exit (status 3) on receiving the N-th (default first) ``OP``;
* ``--hang-on OP[:N]`` -- never answer it;
* ``--once PATH`` -- the faults above fire only if ``PATH`` does not exist yet, and create it
  (so a restarted process behaves);
* ``--garbage-on OP[:N]`` -- answer with a line that is not JSON;
* ``--wrong-id-on OP[:N]`` -- answer with another request id;
* ``--invalid-on OP[:N]`` -- answer with JSON that is not a valid message;
* ``--skip OP`` -- answer every ``OP`` with ``skipped`` (``--skip status``, ``--skip
  rotate_key``, ``--skip retire_key``: an implementation without the optional operations);
* ``--claim GROUPS`` -- claim these groups (comma-separated; ``core`` for only the core);
* ``--protocol N`` -- say protocol N in the handshake;
* ``--noise`` -- write a lot to stderr on every request (the suite must not block on it);
* ``--print-on start`` -- ``print()`` to stdout while starting a run (the server must keep
  it off the protocol);
* ``--accept-every-resume`` -- a liar: every resume is answered ``ok`` (a first consume) and
  nothing happens;
* ``--refuse-every-resume`` -- every resume is refused with ``pause_consumed``.

``OP`` may be ``any`` to count every request.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Sequence
from typing import Any

from pausepoint.core.clauses import Group
from pausepoint_conformance.adapters.reference import ReferenceAdapter
from pausepoint_conformance.protocol.stdio import handle_line
from pausepoint_conformance.protocol.wire import (
    HelloArgs,
    HelloData,
    Ok,
    Refused,
    Result,
    ResumeArgs,
    ResumeData,
    RunReport,
    RunStatus,
    Skipped,
    StartArgs,
)


class FakeAdapter(ReferenceAdapter):
    """The reference (by default in memory) with contract-level misbehaviour switched on."""

    implementation_name = "pausepoint-fake"

    def __init__(self, store: str = "memory", *, claim: Sequence[Group] | None = None,
                 protocol: int | None = None,
                 accept_every_resume: bool = False, refuse_every_resume: bool = False,
                 print_on: Sequence[str] = ()) -> None:
        super().__init__(store)
        self.claim = list(claim) if claim is not None else None
        self.protocol_override = protocol
        self.accept_every_resume = accept_every_resume
        self.refuse_every_resume = refuse_every_resume
        self.print_on = set(print_on)

    def groups(self) -> list[Group]:
        return self.claim if self.claim is not None else super().groups()

    def hello(self, args: HelloArgs) -> Result[HelloData]:
        res = super().hello(args)
        if isinstance(res, Ok) and self.protocol_override is not None:
            return Ok(data=res.data.model_copy(update={"protocol": self.protocol_override}))
        return res

    def start(self, args: StartArgs) -> Result[RunReport]:
        if "start" in self.print_on:
            print("fake: a stray print on stdout while starting a run")
        return super().start(args)

    def resume(self, args: ResumeArgs) -> Result[ResumeData]:
        if self.accept_every_resume:
            return Ok(data=ResumeData(replayed=False, interrupt_id="?",
                                      run=RunReport(run_id=args.run_id, status=RunStatus.DONE,
                                                    events=["done"])))
        if self.refuse_every_resume:
            return Refused(code="pause_consumed", message="the fake refuses every resume")
        return super().resume(args)


def _spec(values: Sequence[str]) -> dict[str, int]:
    out: dict[str, int] = {}
    for v in values:
        op, _, n = v.partition(":")
        out[op] = int(n) if n else 1
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m pausepoint_conformance.adapters.fake",
                                     description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    for flag in ("crash-on", "hang-on", "garbage-on", "wrong-id-on", "invalid-on"):
        parser.add_argument(f"--{flag}", action="append", default=[], metavar="OP[:N]")
    parser.add_argument("--once", metavar="PATH")
    parser.add_argument("--skip", action="append", default=[], metavar="OP")
    parser.add_argument("--print-on", action="append", default=[], metavar="OP")
    parser.add_argument("--claim", metavar="GROUPS")
    parser.add_argument("--protocol", type=int)
    parser.add_argument("--noise", action="store_true")
    parser.add_argument("--accept-every-resume", action="store_true")
    parser.add_argument("--refuse-every-resume", action="store_true")
    parser.add_argument("--store", choices=("memory", "sqlite"), default="memory")
    args = parser.parse_args(argv)
    claim = None
    if args.claim is not None:
        claim = [Group(g) for g in args.claim.split(",") if g]
    adapter = FakeAdapter(args.store, claim=claim, protocol=args.protocol,
                          accept_every_resume=args.accept_every_resume,
                          refuse_every_resume=args.refuse_every_resume, print_on=args.print_on)
    faults = {name: _spec(getattr(args, name.replace("-", "_")))
              for name in ("crash-on", "hang-on", "garbage-on", "wrong-id-on", "invalid-on")}
    seen: dict[str, int] = {}
    out = sys.stdout
    try:
        for line in sys.stdin:
            if not line.strip():
                continue
            try:
                raw = json.loads(line)
                op = str(raw.get("op"))
                rid = raw.get("id")
            except (ValueError, AttributeError):
                op, rid = "?", None
            seen[op] = seen.get(op, 0) + 1
            seen["any"] = seen.get("any", 0) + 1
            if args.noise:
                sys.stderr.write(("noise " * 2000 + "\n") * 8)
                sys.stderr.flush()

            def due(kind: str, op: str = op) -> bool:
                want = faults[kind]
                hit = any(seen.get(k, 0) == n and k in (op, "any") for k, n in want.items())
                if hit and args.once:
                    try:
                        with open(args.once, "x"):
                            pass
                    except FileExistsError:
                        return False
                return hit
            if due("crash-on"):
                sys.stderr.write(f"fake: crashing on {op}\n")
                sys.stderr.flush()
                os._exit(3)
            if due("hang-on"):
                while True:
                    time.sleep(3600)
            if due("garbage-on"):
                out.write("this is not JSON {{{\n")
                out.flush()
                continue
            if due("wrong-id-on"):
                out.write(json.dumps({"id": (rid or 0) + 1000,
                                      "result": {"status": "ok", "data": {}}}) + "\n")
                out.flush()
                continue
            if due("invalid-on"):
                out.write(json.dumps({"id": rid, "result": {"status": "maybe"}}) + "\n")
                out.flush()
                continue
            if op in args.skip:
                response: dict[str, Any] = {"id": rid, "result": Skipped(
                    reason=f"the fake was told to skip {op}").model_dump(mode="json")}
                out.write(json.dumps(response) + "\n")
                out.flush()
                continue
            response, parsed = handle_line(adapter, line)
            out.write(json.dumps(response, separators=(",", ":")) + "\n")
            out.flush()
            if parsed is not None and parsed.value == "bye":
                break
    finally:
        adapter.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
