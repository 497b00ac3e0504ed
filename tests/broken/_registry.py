"""The one registry of the deliberately broken implementations in this folder.

Every module ``tests/broken/<name>.py`` (not starting with ``_``) declares

* ``MUST`` -- the clauses the conformance suite must fail it for, whether it runs checks only
  or checks and vectors: the clause its bug breaks, and every other one the same bug breaks
  deterministically;
* ``VECTORS_MUST`` (optional) -- clauses it must fail *only* when the vectors run too (no
  check reaches them, some vector does; the checks alone must not fail them);
* ``MAY`` (optional) -- a dict of clauses it may or may not fail, each with the one-line
  reason its outcome is not determined (a race, a random signature): nothing deterministic.

:func:`registry` collects them; ``tests/test_conformance_broken.py`` asserts that the suite
fails each exactly: ``MUST`` <= failed <= ``MUST | MAY`` with the checks alone, and ``MUST |
VECTORS_MUST`` <= failed <= ``MUST | VECTORS_MUST | MAY`` with the vectors; and
``tests/broken/_coverage.py`` counts a clause as covered only when some implementation here
must fail it.
"""

from __future__ import annotations

import importlib.util
import sys
from functools import cache
from pathlib import Path
from types import ModuleType

import attrs

HERE = Path(__file__).resolve().parent


@attrs.frozen
class Declared:
    """What one broken implementation declares."""

    name: str
    path: Path
    summary: str
    must: frozenset[str]
    may: frozenset[str]
    vectors_must: frozenset[str] = frozenset()
    reasons: tuple[tuple[str, str], ...] = ()
    """``MAY``'s clauses with the reason each outcome is not determined."""


def load(path: Path) -> ModuleType:
    """Import ``tests/broken/<name>.py`` (its sibling ``_base`` importable) without running
    it as a script."""
    sys.path.insert(0, str(HERE))
    try:
        spec = importlib.util.spec_from_file_location(f"broken_{path.stem}", path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module
    finally:
        sys.path.remove(str(HERE))


def paths() -> list[Path]:
    return sorted(p for p in HERE.glob("*.py") if not p.name.startswith("_"))


@cache
def registry() -> dict[str, Declared]:
    """Every broken implementation by name, with its declared clauses."""
    out: dict[str, Declared] = {}
    for path in paths():
        module = load(path)
        must = frozenset(getattr(module, "MUST", ()))
        may_reasons = getattr(module, "MAY", {})
        reasons = tuple(sorted(may_reasons.items())) if isinstance(may_reasons, dict) else tuple(
            (c, "") for c in may_reasons)
        summary = (module.__doc__ or "").strip().split(".")[0]
        out[path.stem] = Declared(path.stem, path, summary, must,
                                  frozenset(c for c, _r in reasons),
                                  frozenset(getattr(module, "VECTORS_MUST", ())), reasons)
    return out
