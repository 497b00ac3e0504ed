"""``pausepoint.__all__`` is a curated namespace: every name in it is importable from the
package and documented, and none of it is an internal (a private name, or a name from the suite
or the system model).

A name is documented when it is a class or function with a docstring of its own (not one
inherited from a base class), or a module-level value followed by an attribute docstring in the
module that defines it (``CLAUSES: ... = (...)`` then ``\"\"\"...\"\"\"``).
"""

from __future__ import annotations

import ast
import importlib
import inspect
import itertools
from pathlib import Path

import pytest

import pausepoint

INIT = Path(pausepoint.__file__)


def defining_modules(init_source: str) -> dict[str, str]:
    """name -> the module ``pausepoint/__init__.py`` imports it from."""
    out: dict[str, str] = {}
    for node in ast.parse(init_source).body:
        if isinstance(node, ast.ImportFrom) and node.module:
            for alias in node.names:
                out[alias.asname or alias.name] = node.module
    return out


def attribute_docstrings(module_source: str) -> dict[str, str]:
    """Module-level names followed by a string literal (their attribute docstring)."""
    body = ast.parse(module_source).body
    out: dict[str, str] = {}
    for node, after in itertools.pairwise(body):
        if not (isinstance(after, ast.Expr) and isinstance(after.value, ast.Constant)
                and isinstance(after.value.value, str)):
            continue
        targets = (node.targets if isinstance(node, ast.Assign)
                   else [node.target] if isinstance(node, ast.AnnAssign) else [])
        for t in targets:
            if isinstance(t, ast.Name):
                out[t.id] = after.value.value
    return out


def undocumented(name: str, obj: object, module: str) -> str | None:
    """Why ``name`` counts as undocumented, or None when it is documented."""
    if inspect.isclass(obj) or inspect.isfunction(obj):
        own = obj.__dict__.get("__doc__") if inspect.isclass(obj) else obj.__doc__
        return None if isinstance(own, str) and own.strip() else "no docstring of its own"
    source = inspect.getsource(importlib.import_module(module))
    doc = attribute_docstrings(source).get(name, "")
    return None if doc.strip() else f"no attribute docstring in {module}"


def test_all_is_sorted_unique_and_public() -> None:
    names = list(pausepoint.__all__)
    # ruff's RUF022 order: SCREAMING_CASE constants first, then the rest, each alphabetical
    assert names == sorted(set(names), key=lambda n: (not n.isupper(), n))
    assert not [n for n in names if n.startswith("_")]


@pytest.mark.parametrize("name", pausepoint.__all__)
def test_every_exported_name_is_importable_and_documented(name: str) -> None:
    namespace: dict[str, object] = {}
    exec(f"from pausepoint import {name}", namespace)
    obj = namespace[name]
    module = defining_modules(INIT.read_text(encoding="utf-8")).get(name)
    assert module is not None, f"{name} is exported but not imported in pausepoint/__init__.py"
    assert module.startswith(("pausepoint.core.", "pausepoint.engine.", "pausepoint.stores")), (
        f"{name} comes from {module}, which is not for embedders")
    assert undocumented(name, obj, module) is None, f"{name}: {undocumented(name, obj, module)}"


def test_every_public_import_of_the_package_is_exported() -> None:
    """Nothing is imported into the package's namespace without being listed in __all__."""
    imported = set(defining_modules(INIT.read_text(encoding="utf-8")))
    assert imported - set(pausepoint.__all__) == set()


def test_the_documentation_check_can_fail() -> None:
    class Bare:
        pass

    class Documented(Bare):
        """Says what it is."""

    class Inherits(Documented):
        pass

    def bare() -> None:
        pass

    assert undocumented("Bare", Bare, __name__) == "no docstring of its own"
    assert undocumented("Inherits", Inherits, __name__) == "no docstring of its own"
    assert undocumented("Documented", Documented, __name__) is None
    assert undocumented("bare", bare, __name__) == "no docstring of its own"
    assert undocumented("INIT", INIT, __name__) is not None  # no attribute docstring here
    assert undocumented("CLAUSES", pausepoint.CLAUSES, "pausepoint.core.clauses") is None
    source = 'A = 1\n"""An A."""\nB: int = 2\nC = 3\n"""A C."""\n'
    assert attribute_docstrings(source) == {"A": "An A.", "C": "A C."}
