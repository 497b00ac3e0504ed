"""The house's layout: rooms by audience, and the arrows allowed between them.

Every folder (package) of ``pausepoint`` and ``pausepoint_conformance`` opens with a docstring
that says who it is for (``-- for ...:``).  The import arrows are read from the source with
:mod:`ast`: the pure core imports nothing of the engine, the stores or the system model (no
I/O, no edges), and the reference never imports the suite.  :func:`room_graph` is the drawn
import structure (``docs/architecture.md`` embeds it; this test keeps it current).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = {"pausepoint": ROOT / "reference" / "pausepoint",
            "pausepoint_conformance": ROOT / "conformance" / "pausepoint_conformance"}
# room -> rooms it must never import
FORBIDDEN = {
    "pausepoint.core": ("pausepoint.engine", "pausepoint.stores", "pausepoint.system",
                        "pausepoint_conformance"),
    "pausepoint.stores": ("pausepoint.engine", "pausepoint.system", "pausepoint_conformance"),
    "pausepoint.engine": ("pausepoint.system", "pausepoint_conformance"),
    "pausepoint.system": ("pausepoint_conformance",),
    "pausepoint.guards": ("pausepoint.system", "pausepoint_conformance"),
    "pausepoint": ("pausepoint_conformance",),
}


def _room(module: str) -> str:
    parts = module.split(".")
    return ".".join(parts[:2]) if len(parts) > 1 else parts[0]


def _modules() -> dict[str, Path]:
    out = {}
    for top, base in PACKAGES.items():
        for path in base.rglob("*.py"):
            rel = path.relative_to(base).with_suffix("").parts
            if rel[-1] == "__init__":
                rel = rel[:-1]
            out[".".join((top, *rel))] = path
    return out


def _imports(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
    return {m for m in found if m.split(".")[0] in PACKAGES}


def room_graph() -> dict[str, set[str]]:
    """Room -> the other rooms it imports (a room is a top-level folder of either package)."""
    graph: dict[str, set[str]] = {}
    for module, path in _modules().items():
        if module in PACKAGES:  # the package's own __init__ re-exports: not a room
            continue
        src = _room(module)
        graph.setdefault(src, set()).update(
            _room(m) for m in _imports(path) if _room(m) != src and m not in PACKAGES)
    return graph


def test_no_forbidden_arrow() -> None:
    bad = []
    for module, path in _modules().items():
        room = module if module in PACKAGES else _room(module)
        for imported in _imports(path):
            for banned in FORBIDDEN.get(room, ()):
                if imported == banned or imported.startswith(banned + "."):
                    bad.append(f"{path.relative_to(ROOT)} imports {imported}")
    assert not bad, bad


def test_the_core_arrow_rule_bites() -> None:
    """The rule is not vacuous: a core module importing a store would be caught."""
    assert "pausepoint.stores" in FORBIDDEN["pausepoint.core"]
    graph = room_graph()
    assert "pausepoint.core" in graph["pausepoint.engine"]  # the engine does use the core
    assert not graph["pausepoint.core"] & {"pausepoint.engine", "pausepoint.stores",
                                           "pausepoint.system"}


def test_every_folder_says_who_it_is_for() -> None:
    missing = []
    for base in PACKAGES.values():
        for init in [base / "__init__.py", *sorted(base.glob("*/__init__.py"))]:
            doc = ast.get_docstring(ast.parse(init.read_text())) or ""
            if init.parent != base and not re.search(r"\bfor\b", doc.split("\n", 1)[0]):
                missing.append(str(init.relative_to(ROOT)))
    assert not missing, f"first docstring line does not say who the folder is for: {missing}"


def mermaid() -> str:
    graph = room_graph()
    rooms = sorted(set(graph) | {d for dsts in graph.values() for d in dsts})
    lines = ["flowchart LR"]
    lines += [f"    {r.replace('.', '_')}[{r}]" for r in rooms]
    lines += [f"    {src.replace('.', '_')} --> {d.replace('.', '_')}"
              for src, dsts in sorted(graph.items()) for d in sorted(dsts)]
    return "\n".join(lines)


def test_architecture_page_draws_the_current_import_structure() -> None:
    page = (ROOT / "docs" / "architecture.md").read_text()
    block = re.search(r"<!-- import-graph:start -->\n```mermaid\n(.*?)```\n"
                      r"<!-- import-graph:end -->", page, re.DOTALL)
    assert block, "docs/architecture.md has no import-graph block"
    assert block.group(1).strip() == mermaid().strip(), (
        "docs/architecture.md's import graph is stale; the current one:\n" + mermaid())
