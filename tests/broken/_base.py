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

from pausepoint.stores.base import StoreBundle
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


class Bundle:
    """A store bundle with some facets replaced; the rest are the wrapped bundle's."""

    def __init__(self, inner: StoreBundle, **facets: Any) -> None:
        self._inner = inner
        self.durable = inner.durable
        self._facets = facets

    def __getattr__(self, name: str) -> Any:
        if name in self._facets:
            return self._facets[name]
        return getattr(self._inner, name)

    def close(self) -> None:
        self._inner.close()


class EachWriteCommits(Bundle):
    """A store bundle with some facets replaced and no unit of work: every write commits by
    itself, as a store without units.  (A unit of work holds SQLite's write lock through an
    operation, which serialises racing drivers and would hide a race's bug.)"""

    def __getattr__(self, name: str) -> Any:
        if name in ("unit_of_work", "commit_so_far"):
            raise AttributeError(name)
        return super().__getattr__(name)


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
