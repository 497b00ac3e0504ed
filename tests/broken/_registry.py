"""The one registry of the deliberately broken implementations in this folder.

Every module ``tests/broken/<name>.py`` (not starting with ``_``) declares

* ``MUST`` -- the clauses the conformance suite must fail it for (the clause its bug breaks),
  whether it runs checks only or checks and vectors;
* ``MAY`` -- other clauses it may also fail, because the same bug legitimately breaks them
  too (a neighbouring clause, or the refusal order the bug reorders).

:func:`registry` collects them; ``tests/test_conformance_broken.py`` asserts that the suite
fails each exactly within ``MUST`` <= failed <= ``MUST | MAY``, and ``tests/coverage.py``
counts a clause as covered only when some implementation here must fail it.
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
        may = frozenset(getattr(module, "MAY", ()))
        summary = (module.__doc__ or "").strip().split(".")[0]
        out[path.stem] = Declared(path.stem, path, summary, must, may)
    return out
