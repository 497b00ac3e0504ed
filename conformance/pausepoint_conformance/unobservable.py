"""Clauses the adapter protocol cannot reach, and why.

The clause table reports these as *unobservable* (with the reason) instead of passing them, so
a conformance run never claims more than it verified.  They are kept out of the check modules
on purpose: naming a clause here does not test it.
"""

from __future__ import annotations

from typing import Final

UNOBSERVABLE: Final[dict[str, str]] = {
    "pause.checkpoint.bound": "a scripted run always pauses at a checkpoint; a pause bound to "
                              "none cannot be provoked through the adapter protocol",
    "pause.signal.base-exception": "how the pause signal is raised is inside the "
                                   "implementation; its consequence, run.paused.never-error, is "
                                   "checked",
    "pause.signal.single-catch": "where the pause signal is caught is inside the "
                                 "implementation; its consequence, run.events.single-terminal, "
                                 "is checked",
    "wiring.consistent": "deployment wiring happens before the adapter protocol starts",
    "wiring.no-interaction-no-tool": "the model-facing tool list is not an operation of the "
                                     "adapter protocol",
}
