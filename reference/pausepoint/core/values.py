"""``record``: the class decorator of the values a pause -> resume cycle builds by the dozen
(run and pause records, claims, states, the lifecycle's events and verdicts, a run's result).

They are immutable by contract, as ``attrs.frozen`` makes a class -- and the type checker holds
every module to it: to ``mypy`` (``--strict``, in CI) a ``record`` class *is* an
``attrs.frozen`` one, and an assignment to one of its fields is an error.  At run time it is
``attrs.define`` with the same equality and the same hash by value, but no ``__setattr__`` that
refuses: on CPython 3.11 a frozen slotted class sets each field in ``__init__`` through
``object.__setattr__``'s bound wrapper -- a call that packs a tuple and looks the slot up in
the type -- some 4x the cost of a plain slot store, and an embedding-API cycle builds about 40
of these values (270 fields).  In ``bench_cycle.py``'s rotation (300 rounds, processes
alternated, measured once on a 2-core VM), the embedding cycle took 1.64-1.65 ms with these
classes frozen at run time and 1.49-1.57 ms without.

Classes that are built once (configuration, tables, keys) stay ``attrs.frozen``, refusals at
run time included."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import attrs

__all__ = ["record"]

if TYPE_CHECKING:
    from attrs import frozen as record
else:
    def record(cls: Any) -> Any:
        """``attrs.frozen`` to the type checker; ``attrs.define`` with equality and a hash by
        value at run time (see the module docstring)."""
        return attrs.define(cls, frozen=False, unsafe_hash=True,
                            on_setattr=attrs.setters.NO_OP)
