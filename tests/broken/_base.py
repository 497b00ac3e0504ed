"""Shared parts of the deliberately broken implementations.

Each module in this folder is the reference implementation with *one piece* swapped for a
plausible bug, served over the stdio protocol when run as a script
(``python tests/broken/<name>.py``).  Each declares, in ``MUST``, the clauses the conformance
suite must fail it for and, in ``MAY``, those it may also fail (``_registry.py`` collects
them); ``tests/test_conformance_broken.py`` drives each one over stdio and checks exactly
that.  A conformance check is trusted only after it failed here.
"""

from __future__ import annotations

import base64
import json
import sys
from typing import Any

from pausepoint_conformance.faults.runrace import WrappedBundle
from pausepoint_conformance.protocol.port import Adapter
from pausepoint_conformance.protocol.stdio import serve


def token_claims(token: object) -> dict[str, Any] | None:
    """The claims part of a pp1 token, decoded WITHOUT verifying anything (the bug many
    broken implementations share)."""
    if not isinstance(token, str):
        return None
    parts = token.split(".")
    if len(parts) != 4:
        return None
    try:
        raw = base64.urlsafe_b64decode(parts[2] + "=" * (-len(parts[2]) % 4))
        claims = json.loads(raw)
    except ValueError:
        return None
    return claims if isinstance(claims, dict) else None


Bundle = WrappedBundle.of
"""A store bundle with some facets replaced (keyword arguments); the rest are the wrapped
bundle's."""


class Delegate:
    """Forward everything not overridden to ``inner``."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.durable = getattr(inner, "durable", False)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


def machine_harness(machine: Any) -> type[Any]:
    """A harness whose pause service asks ``machine`` (a lifecycle built from the table with
    one row changed) instead of the contract's."""
    from pausepoint.engine.harness import Harness

    class MachineHarness(Harness):
        def _compose(self, bundle: Any) -> Any:
            deployment = super()._compose(bundle)
            deployment.service.machine = machine
            return deployment

    return MachineHarness


def main(make: Any) -> None:
    adapter: Adapter = make()
    sys.exit(serve(adapter))
