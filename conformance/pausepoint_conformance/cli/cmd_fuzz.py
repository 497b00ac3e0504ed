"""Throw hostile tokens -- and hostile responses and payloads -- at the reference service.

Tokens are valid tokens of resumable pauses, mutated: characters replaced, bits flipped,
truncated, extended, parts duplicated or swapped between tokens, claims swapped under the
original signature, re-signed with an attacker's key (Ed25519, or HMAC keyed by the public key),
unknown key ids, an alg header, non-canonical encodings, oversized, non-ASCII, non-UTF-8 bytes,
wrong types, and tokens the ring really signed for claims no pause has.  Every one goes through
``PauseService.resume`` with a valid response; every 500th input is also a hostile response
(with a valid token) or a hostile payload (for a new pause): huge, too deep, cyclic, not JSON,
or not an object.

Past the signature, with the test signing key: validly signed tokens with hostile claims
(binding, expiry, interrupt id, key id, format version), hostile responses with valid tokens,
decided pauses answered again, valid tokens from another session, scope or run, and race rounds
(one legitimate resume against hostile ones on a fresh pause).  Every refusal is counted by the
layer that stopped it: parse, signature, claims, binding, phase, store.

Nothing may be accepted, nothing may raise anything but a refusal with a code, and the store's
state digest must be the same before and after every batch.  Afterwards one valid answer is
sent and must be accepted (the target was live).  Exit status 1 on any violation.

Examples:
  pausepoint fuzz --count 1000000                 # memory store, every core
  pausepoint fuzz --count 200000 --seed 7 --store sqlite:/tmp/fuzz.db
  pausepoint fuzz --count 100000 --store postgres: # $PAUSEPOINT_PG_DSN, a fresh schema

A DSN with a password is refused on the command line (``ps`` would show it to every user of the
machine): put it in $PAUSEPOINT_PG_DSN and pass ``--store postgres:``.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import re
import tempfile
import time
import urllib.parse
import uuid

from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskProgressColumn,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Table

from pausepoint_conformance.cli.common import UsageError, one_line, positive_int
from pausepoint_conformance.cli.common import console as out_console
from pausepoint_conformance.faults.fuzz import LAYERS, Plan, Tally, run_fuzz
from pausepoint_conformance.faults.testbed import StoreSpec, drop, fresh_postgres, save_key

NAME = "fuzz"
HELP = "throw hostile tokens, responses and payloads at the service; nothing may get through"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--count", type=positive_int, default=100_000,
                        help="hostile tokens to try (default 100000)")
    parser.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    parser.add_argument("--store", default="memory:",
                        help="memory: (default), sqlite:PATH, or postgres: (the DSN from "
                             "$PAUSEPOINT_PG_DSN; PostgreSQL runs in a fresh schema, dropped "
                             "afterwards; it needs the postgres extra: pip install "
                             "'pausepoint[postgres]').  A DSN with a password is refused here: "
                             "it would show on the command line")
    parser.add_argument("--jobs", type=positive_int, default=os.cpu_count() or 1,
                        help="worker processes (default: one per CPU)")
    parser.add_argument("--batch", type=positive_int, default=10_000,
                        help="tokens between two digests of the store's state (default 10000)")


def has_password(dsn: str) -> bool:
    """Whether a PostgreSQL DSN (URL or key=value form) carries a password."""
    if "://" in dsn:
        try:
            return bool(urllib.parse.urlsplit(dsn).password) or "password=" in dsn
        except ValueError:
            return True
    return re.search(r"(^|\s)password\s*=", dsn) is not None


def _table(tally: Tally, seconds: float, live: bool) -> Table:
    table = Table(title="pausepoint fuzz", show_header=True)
    table.add_column("count")
    table.add_column("value", justify="right")
    rate = tally.tried / seconds if seconds > 0 else 0.0
    table.add_row("hostile tokens tried", f"{tally.tried:,}")
    for code, n in sorted(tally.refused.items(), key=lambda kv: -kv[1]):
        table.add_row(f"  refused: {code}", f"{n:,}")
    for layer in LAYERS:
        n = tally.layers[layer]
        share = 100.0 * n / tally.tried if tally.tried else 0.0
        table.add_row(f"  stopped at layer {layer}", f"{n:,} ({share:.1f} %)")
    beyond = 100.0 * tally.beyond_signature / tally.tried if tally.tried else 0.0
    table.add_row("reached beyond the signature check", f"{tally.beyond_signature:,} "
                  f"({beyond:.1f} %)")
    table.add_row(f"race rounds (a legitimate resume against {tally.raced:,} hostile ones)",
                  f"{tally.races:,}")
    for layer in LAYERS:
        if tally.race_layers[layer]:
            table.add_row(f"  raced, stopped at layer {layer}", f"{tally.race_layers[layer]:,}")
    for code, n in sorted(tally.value_refusals.items()):
        table.add_row(f"  hostile {code.replace(':', ' refused: ')}", f"{n:,}")
    table.add_row("accepted (must be 0)", f"{tally.accepted:,}",
                  style="bold red" if tally.accepted else None)
    table.add_row("exceptions (must be 0)", f"{tally.exceptions:,}",
                  style="bold red" if tally.exceptions else None)
    table.add_row(f"state changes over {tally.digests:,} digested batches (must be 0)",
                  f"{tally.state_changes:,}", style="bold red" if tally.state_changes else None)
    table.add_row("mutations equal to a valid token (not counted)", f"{tally.skipped_valid:,}")
    table.add_row("valid answer accepted afterwards (target live)", "yes" if live else "NO",
                  style=None if live else "bold red")
    table.add_row("time", f"{seconds:.1f} s")
    table.add_row("tokens per second", f"{rate:,.0f}")
    return table


def _probe(spec: StoreSpec) -> None:
    """Open and close the store once, so a store that cannot open is a usage error before the
    run (the DSN is never echoed: it may hold a password)."""
    if spec.kind == "postgres" and importlib.util.find_spec("psycopg") is None:
        raise UsageError("--store postgres: needs the postgres extra; install it with "
                         "pip install 'pausepoint[postgres]'")
    if spec.kind == "sqlite" and not os.path.isdir(os.path.dirname(spec.location) or "."):
        raise UsageError(f"--store sqlite:{spec.location}: the folder does not exist; "
                         "create it or give another path")
    try:
        spec.open().close()
    except Exception as exc:
        where = "postgres: (the DSN given)" if spec.kind == "postgres" else \
            f"sqlite:{spec.location}"
        raise UsageError(f"--store {where}: cannot open it ({one_line(exc)}); check the "
                         "path or the DSN and that the server runs") from None


def run(args: argparse.Namespace) -> int:
    console = out_console()
    try:
        spec = StoreSpec.from_url(args.store)
    except ValueError as exc:
        raise UsageError(f"--store: {exc}") from None
    if spec.kind == "postgres":
        if not spec.location:
            raise UsageError("--store postgres: needs $PAUSEPOINT_PG_DSN set")
        if spec.location != os.environ.get("PAUSEPOINT_PG_DSN") and has_password(spec.location):
            raise UsageError("the DSN on the command line carries a password, which `ps` "
                             "shows to every user; export it as $PAUSEPOINT_PG_DSN and pass "
                             "--store postgres:")
        spec = fresh_postgres(spec.location, "pp_fuzz")
    _probe(spec)
    jobs = max(1, min(args.jobs, args.count))
    with tempfile.TemporaryDirectory(prefix="pp-fuzz-") as tmp:
        key = os.path.join(tmp, "key.ed25519")
        save_key(key)
        plan = Plan(count=args.count, seed=args.seed, spec=spec, key_path=key,
                    batch=max(1, args.batch), prefix=f"fuzz-{uuid.uuid4().hex[:8]}")
        console.print(f"fuzzing {spec.describe()} with {args.count:,} hostile tokens, seed "
                      f"{args.seed}, {jobs} process(es)")
        t0 = time.monotonic()
        try:
            with Progress(TextColumn("[bold]hostile tokens"), BarColumn(), MofNCompleteColumn(),
                          TaskProgressColumn(), TextColumn("{task.fields[rate]}"),
                          TimeElapsedColumn(), TimeRemainingColumn(), console=console) as bar:
                task = bar.add_task("fuzz", total=args.count, rate="")

                def advance(n: int) -> None:
                    done = bar.tasks[0].completed + n
                    elapsed = time.monotonic() - t0
                    bar.update(task, advance=n,
                               rate=f"{done / elapsed:,.0f}/s" if elapsed > 0 else "")

                tally, live = run_fuzz(plan, jobs=jobs, progress=advance)
        finally:
            if spec.kind == "postgres":
                drop(spec)
        seconds = time.monotonic() - t0
    console.print(_table(tally, seconds, live))
    for finding in tally.findings[:20]:
        console.print(f"[red]finding:[/red] {finding}")
    bad = tally.violations or not live or tally.tried != args.count
    return 1 if bad else 0
