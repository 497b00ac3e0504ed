"""The conformance checks, clause group by clause group.

Each check starts from a fresh instance (``reset``), drives scripted runs, and states what the
contract requires, citing clause ids.  A check could fail: each one was seen failing on one of
the deliberately broken implementations in ``tests/broken/`` (see
``tests/test_conformance_broken.py``).

Every clause of the catalogue is cited by at least one check (a test keeps it so): the ones that
live inside an implementation -- how the pause signal travels, a pause bound to no checkpoint,
deployment wiring -- are reached through the script steps and the optional ``wiring``
operation made for them.
"""

# Imported in this order, which is the order the checks run and are reported in -- the order
# of the clause groups in the contract, not the alphabet (so isort keeps off it).
# isort: off
from pausepoint_conformance.suite.checks import (  # noqa: F401 - importing registers the checks
    core,
    tokens,
    lineage,
    expiry,
    replay,
    cancel,
    multi,
    unknown,
    durability,
    concurrency,
    gate,
    wiring,
    status,
    runlevel,  # the run level (spec/contract.md section 11a), after the pause level
)
# isort: on
