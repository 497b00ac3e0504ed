"""Every .tla file in tla/ parses with tree-sitter-tlaplus: no ERROR and no MISSING nodes.
(TLC itself is not on the package registries; `pausepoint check --tlc` runs it when given.)"""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest
import tree_sitter_tlaplus
from tree_sitter import Language, Node, Parser

TLA_DIR = Path(__file__).resolve().parents[1] / "tla"
with warnings.catch_warnings():  # tree-sitter-tlaplus 1.5 hands over the language as an int
    warnings.simplefilter("ignore", DeprecationWarning)
    PARSER = Parser(Language(tree_sitter_tlaplus.language()))


def problems(source: bytes) -> list[str]:
    out: list[str] = []
    stack: list[Node] = [PARSER.parse(source).root_node]
    while stack:
        node = stack.pop()
        if node.type == "ERROR" or node.is_missing:
            line, col = node.start_point
            kind = "MISSING " + node.type if node.is_missing else "ERROR"
            out.append(f"{kind} at {line + 1}:{col + 1}: {node.text[:60]!r}")
        stack.extend(node.children)
    return out


FILES = sorted(TLA_DIR.glob("*.tla"))


def test_there_are_specs() -> None:
    names = {f.stem for f in FILES}
    assert {"Pausepoint", "MCPausepoint", "TracePausepoint", "SIMPausepoint"} <= names


@pytest.mark.parametrize("path", FILES, ids=[f.name for f in FILES])
def test_tla_file_parses(path: Path) -> None:
    source = path.read_bytes()
    assert problems(source) == []
    root = PARSER.parse(source).root_node
    assert root.children and root.children[0].type == "module"


def test_a_broken_spec_is_reported() -> None:
    good = (TLA_DIR / "Pausepoint.tla").read_bytes()
    broken = good.replace(b"Tick ==\n    /\\ now < MaxTime", b"Tick ==\n    /\\ now < ", 1)
    assert broken != good
    assert problems(broken) != []
    assert problems(b"---- MODULE M ----\nA == [x |-> \n====\n") != []
