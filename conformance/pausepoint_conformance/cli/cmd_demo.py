"""Watch the contract at work: a scripted agent on the embedded default (SQLite files in a
temporary directory), driven by the reference harness, shown as an event log.

Scenes:
  1 pause        an agent reserves stock, then stops to ask a person to approve a payment
  2 answer       the person approves; the run continues from the recorded turn
  3 replay       the same answer arrives again: the first result, nothing runs twice
  4 conflict     a different answer to the decided pause is refused
  5 expiry       an answer after the pause expired is refused
  6 unknown      the process dies inside a payment; restart surfaces the unknown outcome,
                 which blocks resumes until it is reconciled
  7 cancel       cancelling a run cancels its child runs' pauses
  8 restart      the process dies while a pause waits; after a restart the same token works

Every line cites the clause of the contract it demonstrates (`pausepoint clauses` lists
them); the demo checks what it shows and exits 1 if the implementation ever disagrees.

Examples:
  pausepoint demo
  pausepoint demo --no-color | less
"""

from __future__ import annotations

import argparse
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from pausepoint.core.errors import PausepointError
from pausepoint.engine.clock import ManualClock
from pausepoint.engine.harness import Harness, Report, SqliteWorld
from pausepoint.engine.run import PendingInterrupt
from pausepoint_conformance.cli.common import console as out_console

NAME = "demo"
HELP = "a scripted agent that pauses, is answered and resumes, shown as events with clauses"

TTL_MS = 60_000
SESSION, SCOPE = "session-42", "acme"
ORDER: list[dict[str, Any]] = [{"op": "effect", "key": "reserve_stock"},
         {"op": "interrupt", "name": "approve",
          "payload": {"action": "pay supplier", "amount": 120, "currency": "EUR",
                      "payee": "ACME Tools"}},
         {"op": "effect", "key": "charge_card"},
         {"op": "end"}]
YES: dict[str, Any] = {"approved": True}
NO: dict[str, Any] = {"approved": False}


class DemoFailed(Exception):
    """The implementation did something the contract forbids (the demo checks itself)."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--no-color", action="store_true", help="plain text, no colours")


class Demo:
    def __init__(self, console: Console, harness: Harness, clock: ManualClock) -> None:
        self.out = console
        self.h = harness
        self.clock = clock
        self.scene = ""

    # -- the event log ---------------------------------------------------------------------

    def title(self, n: int, name: str, what: str) -> None:
        self.scene = name
        self.out.print()
        self.out.rule(Text(f"scene {n}: {name} -- {what}", style="bold"), align="left")

    def log(self, what: str, clause: str = "", style: str = "") -> None:
        line = Text(f"  t={self.clock.now() / 1000:>5.1f}s  ", style="dim")
        line.append(what, style=style)
        if clause:
            line.append(f"   [{clause}]", style="cyan")
        self.out.print(line)

    def expect(self, ok: bool, what: str) -> None:
        if not ok:
            raise DemoFailed(f"scene {self.scene}: {what}")

    def events(self, rep: Report) -> None:
        kinds = " -> ".join(rep.events) or "(none)"
        self.log(f"run {rep.run_id}: events {kinds}; status {rep.status}",
                 "run.events.single-terminal" if rep.events else "", "yellow")

    def refused(self, fn: Callable[[], object], code: str, clause: str, what: str) -> None:
        try:
            fn()
        except PausepointError as e:
            self.expect(e.code.value == code, f"{what}: refused {e.code.value}, not {code}")
            self.log(f"{what}: refused with {e.code.value}", e.clause, "red")
            return
        raise DemoFailed(f"scene {self.scene}: {what} was accepted; {code} expected")

    def show_pending(self, p: PendingInterrupt) -> None:
        """The pending pause as a person would see it in an approval inbox."""
        grid = Table.grid(padding=(0, 2))
        grid.add_column(style="bold")
        grid.add_column()
        for key, value in (p.payload or {}).items():
            grid.add_row(str(key), str(value))
        grid.add_row("", "")
        grid.add_row("expires", f"at t={p.expires_at / 1000:.0f}s "
                                f"(in {(p.expires_at - self.clock.now()) / 1000:.0f}s)")
        grid.add_row("can answer", "yes" if p.resumable else "not yet")
        grid.add_row("answer with", p.token[:24] + "...")
        self.out.print(Panel(grid, title=f"[bold]{p.name}[/bold]: {p.interrupt_id}",
                             subtitle="waiting for a person", expand=False,
                             border_style="magenta"))

    def resume(self, p: PendingInterrupt, response: object, **kw: Any) -> Report:
        return self.h.resume(p.token, response, session_id=SESSION, scope=SCOPE, **kw)

    def count(self, run_id: str, key: str) -> int:
        return self.h.effect_count(run_id, key)

    def start(self, run_id: str, script: list[dict[str, Any]], **kw: Any) -> Report:
        rep = self.h.start(script, run_id=run_id, session_id=SESSION, scope=SCOPE, **kw)
        self.events(rep)
        return rep

    # -- the scenes ------------------------------------------------------------------------

    def run(self) -> None:
        self.title(1, "pause", "an agent stops to ask a person")
        rep = self.start("order-1", ORDER)
        self.expect(rep.status == "paused" and len(rep.pauses) == 1, "the run did not pause")
        p = rep.pauses[0]
        self.log(f"effect reserve_stock ran {self.count('order-1', 'reserve_stock')} time",
                 "effect.journal.bracket", "green")
        self.log(f"pause {p.interrupt_id} published: {p.name}, payload, token, expiry",
                 "pause.published", "magenta")
        self.expect(p.resumable, "the pause was not resumable")
        self.log("the turn checkpoint was written first, so the pause is resumable",
                 "turn.resumable.earned", "magenta")
        self.show_pending(p)

        self.title(2, "answer", "the person approves; the run continues")
        self.clock.advance(5_000)
        out = self.resume(p, YES, responder="alice")
        self.expect(not out.replayed and out.status == "done", "the answer did not finish it")
        self.log("alice approves: the pause is consumed, once", "resume.consume.at-most-once",
                 "green")
        self.events(out)
        self.expect(self.count("order-1", "reserve_stock") == 1
                    and self.count("order-1", "charge_card") == 1, "an effect ran twice")
        self.log("charge_card ran once; reserve_stock, before the pause, was not rerun",
                 "resume.continuation.recorded-turn", "green")

        self.title(3, "replay", "the same answer arrives again (a retry, a double click)")
        again = self.resume(p, YES, responder="alice")
        self.expect(again.replayed, "a repeated answer was not a replay")
        self.log("the same answer again: the first result comes back, replayed=True",
                 "replay.same-response", "green")
        self.expect(self.count("order-1", "charge_card") == 1, "the replay charged again")
        self.log("charge_card still ran once", "effect.at-most-once", "green")

        self.title(4, "conflict", "a different answer to a decided pause")
        self.refused(lambda: self.resume(p, NO, responder="bob"), "response_conflict",
                     "replay.different-response.conflict", "bob rejects after alice approved")
        self.expect(self.h.pause_state(p.interrupt_id) == "consumed", "consumed pause moved")
        self.log("the pause stays consumed", "lifecycle.terminal.absorbing")

        self.title(5, "expiry", "an answer after the pause expired")
        q = self.start("order-2", ORDER).pauses[0]
        self.show_pending(q)
        self.clock.advance(TTL_MS)
        self.log(f"{TTL_MS // 1000} s pass: the clock reaches expires_at")
        self.h.expire_due()
        self.expect(self.h.pause_state(q.interrupt_id) == "expired", "the pause did not expire")
        self.log(f"pause {q.interrupt_id} is expired", "expiry.transition", "red")
        self.refused(lambda: self.resume(q, YES, responder="alice"), "pause_expired",
                     "resume.expiry", "alice answers late")
        self.expect(self.count("order-2", "charge_card") == 0, "an expired pause continued")
        self.log("charge_card never ran for order-2", "expiry.no-consume-after", "green")

        self.title(6, "unknown outcome", "the process dies in the middle of a payment")
        script: list[dict[str, Any]] = [
                  {"op": "effect", "key": "charge_card", "fault": "crash_after_apply"},
                  {"op": "interrupt", "name": "confirm", "payload": {"q": "ship it?"}},
                  {"op": "end"}]
        rep = self.start("order-3", script)
        self.expect(rep.status == "stopped", "the process did not die")
        self.log("the card was charged, then the process died before journalling it finished",
                 "effect.journal.bracket", "red")
        recovered = self.h.restart()
        rec = [x for r in recovered for x in r.pauses if x.run_id == "order-3"]
        self.expect(len(rec) == 1 and not rec[0].resumable, "no recovery pause")
        r = rec[0]
        self.log(f"restart: charge_card is in doubt, so recovery pause {r.interrupt_id} opens "
                 f"in {self.h.pause_state(r.interrupt_id)} instead of charging again",
                 "effect.unknown-outcome", "yellow")
        self.refused(lambda: self.resume(r, {}, responder="operator"), "outcome_unknown",
                     "resume.unknown-outcome.blocks", "resuming before anyone checked")
        self.h.reconcile(r.interrupt_id, "applied")
        self.log("an operator checks the bank: the charge was applied -> reconciled, "
                 f"{self.h.pause_state(r.interrupt_id)}", "effect.reconcile", "green")
        out = self.resume(r, {}, responder="operator")
        self.events(out)
        self.expect(self.count("order-3", "charge_card") == 1, "the charge was retried")
        self.log("the run goes on to its question; charge_card ran once in all",
                 "effect.at-most-once", "green")

        self.title(7, "cancel", "cancelling a run reaches its children")
        self.start("trip", [{"op": "interrupt", "name": "approve", "payload": {"trip": "Oslo"}},
                            {"op": "end"}])
        child = self.start("trip/hotel", [{"op": "interrupt", "name": "choose",
                                           "payload": {"hotels": ["A", "B"]}}, {"op": "end"}],
                           parent_run_id="trip").pauses[0]
        self.log(f"child run trip/hotel waits on {child.interrupt_id}", "pause.published")
        self.h.cancel("trip")
        self.expect(self.h.pause_state(child.interrupt_id) == "cancelled", "child not cancelled")
        self.log("cancel trip: the child's pause is cancelled too", "cancel.propagates", "red")
        self.refused(lambda: self.resume(child, {"choice": "A"}, responder="alice"),
                     "pause_cancelled", "cancel.distinct", "answering the child's question")

        self.title(8, "crash and restart", "the process dies while a pause waits")
        s = self.start("order-4", ORDER).pauses[0]
        self.h.crash()
        self.log("the process dies; only the SQLite files remain", "", "red")
        self.h.restart()
        again_published = self.h.published("order-4")
        self.expect(len(again_published) == 1
                    and again_published[0].token == s.token, "the pause was lost")
        self.log("restart: the same pause is published again, with the same token",
                 "durability.token.reissue", "green")
        out = self.resume(again_published[0], YES, responder="alice")
        self.events(out)
        self.expect(self.count("order-4", "charge_card") == 1
                    and self.count("order-4", "reserve_stock") == 1, "an effect ran twice")
        self.log("answered after the restart: the run finishes, every effect once",
                 "durability.restart", "green")


def run(args: argparse.Namespace) -> int:
    wide = out_console()  # full width in files and pipes
    console = Console(no_color=args.no_color, highlight=False,
                      width=None if wide.is_terminal else wide.width)
    with tempfile.TemporaryDirectory(prefix="pausepoint-demo-") as tmp:
        clock = ManualClock(0)
        harness = Harness.open(f"sqlite:{Path(tmp) / 'pausepoint.db'}", clock=clock,
                               ttl_ms=TTL_MS, world=SqliteWorld(str(Path(tmp) / "world.db")))
        console.print(Text("pausepoint demo: a scripted agent on SQLite "
                           f"({tmp}), the reference harness, a manual clock", style="bold"))
        demo = Demo(console, harness, clock)
        try:
            demo.run()
        except (DemoFailed, PausepointError) as exc:
            console.print(Text(f"demo failed: {exc}", style="bold red"))
            return 1
        finally:
            if not harness.crashed:
                harness.deployment.store.close()
    console.print()
    console.print(Text("every scene behaved as the contract says", style="bold green"))
    return 0
