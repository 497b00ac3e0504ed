"""Generated text: the lifecycle diagram, the transition list, the ordered checks, the
error-code table and the clause lines of the contract, and the ``ClauseId`` type, all rendered
from the data they describe.

Every function here is pure: it reads :mod:`pausepoint.core.lifecycle` and
:mod:`pausepoint.core.clauses` and returns text.  Nothing is written anywhere; the tests compare
the committed ``spec/lifecycle.md`` with :func:`lifecycle_markdown`, each
``<!-- BEGIN GENERATED: name -->`` ... ``<!-- END GENERATED: name -->`` section of
``spec/contract.md`` with ``SECTIONS[name]()``, every clause line of ``spec/contract.md`` with
:func:`clause_line`, and ``pausepoint/core/clause_ids.py`` with :func:`clause_ids_module`, so
neither the spec nor the types can drift from the table and the catalogue.

To regenerate after changing the table or the catalogue (from the repository's root)::

    python -c "import pausepoint.system.diagram as d; print(d.lifecycle_markdown(), end='')" \\
        > spec/lifecycle.md
    python -c "import pausepoint.system.diagram as d, pathlib; \\
        p = pathlib.Path('spec/contract.md'); p.write_text(d.regenerate(p.read_text()))"
    python -c "import pausepoint.system.diagram as d, pathlib; \\
        pathlib.Path(d.CLAUSE_IDS_PATH).write_text(d.clause_ids_module())"

(The last one writes from Python, not through a shell redirection: the redirection would empty
the module before the interpreter imports it.)
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import Final

from pausepoint.core import lifecycle as lc
from pausepoint.core import runs
from pausepoint.core.clauses import CLAUSE_BY_ID, CLAUSES, ERROR_DOCS, Clause, ErrorCode

__all__ = [
    "CLAUSE_IDS_PATH",
    "CLAUSE_LINE_START",
    "SECTIONS",
    "begin_marker",
    "clause_ids_module",
    "clause_line",
    "clause_lines",
    "end_marker",
    "error_code_table",
    "generated_sections",
    "lifecycle_markdown",
    "mermaid",
    "pause_checks",
    "regenerate",
    "resume_checks",
    "splice",
    "transition_list",
]


def _cell(text: str) -> str:
    """Make ``text`` safe inside a Markdown table cell."""
    return text.replace("|", "\\|").replace("\n", " ")


def _code(text: str) -> str:
    return f"`{text}`"


def _targets(row: lc.Row) -> tuple[lc.Phase, ...]:
    """Where an accepting row can lead: its target, or both of a choice's."""
    return row.targets()


# -- the diagram -----------------------------------------------------------------------------


def _state_diagram(edges: Iterable[tuple[str | None, str, str]], start: str,
                   terminal: Iterable[str]) -> str:
    """A fenced Mermaid ``stateDiagram-v2``: ``[*]`` to ``start``, one arrow per pair of
    states whose label lists the events in table order (a source of None is ``[*]``), and an
    arrow to ``[*]`` from each terminal state."""
    labels: dict[tuple[str, str], list[str]] = {}
    for src, name, dst in edges:
        names = labels.setdefault((src or "[*]", dst), [])
        if name not in names:
            names.append(name)
    lines = ["```mermaid", "stateDiagram-v2", f"    [*] --> {start}"]
    for (src, dst), names in labels.items():
        if src != "[*]":
            lines.append(f"    {src} --> {dst} : {' / '.join(names)}")
    lines += [f"    {state} --> [*]" for state in terminal]
    lines.append("```")
    return "\n".join(lines) + "\n"


def mermaid() -> str:
    """The lifecycle as a Mermaid ``stateDiagram-v2`` block (fenced), one edge per accepting
    transition of :func:`pausepoint.core.lifecycle.transitions`; edges between the same two states
    share one arrow whose label lists the events in table order."""
    return _state_diagram(((s.value, n, d.value) for s, n, d in lc.transitions()),
                          lc.Phase.RUNNING.value,
                          (p.value for p in lc.Phase if p in lc.TERMINAL))


def run_mermaid() -> str:
    """The run lifecycle (:data:`pausepoint.core.runs.TABLE`) as a Mermaid block, drawn like
    :func:`mermaid`: a run starts ``running``; done, error and cancelled are terminal."""
    return _state_diagram(((None if s is None else s.value, n, d.value)
                           for s, n, d in runs.transitions()),
                          runs.RunStatus.RUNNING.value,
                          (s.value for s in runs.RunStatus if s in runs.TERMINAL))


# -- the transition list ---------------------------------------------------------------------


def _outcome(row: lc.Row) -> str:
    if row.refuse is not None:
        return f"refused {_code(row.refuse.value)}"
    targets = " or ".join(_code(t.value) for t in _targets(row))
    action = f" (action {_code(row.action.value)})" if row.action is not None else ""
    return f"→ {targets}{action}"


def transition_list() -> str:
    """Every row of :data:`pausepoint.core.lifecycle.TABLE`, in table order, as a Markdown table:
    the event, the state it applies in, the row's own checks (after the event's common checks),
    the outcome and the clause the row implements."""
    lines = [
        "| # | event | from | row checks, in order | outcome | clause |",
        "|---|---|---|---|---|---|",
    ]
    for n, row in enumerate(lc.TABLE, start=1):
        checks = ", ".join(f"{_code(c.name)} → {_code(c.code.value)}" for c in row.checks)
        lines.append("| " + " | ".join((
            str(n),
            _code(row.event.__name__),
            _code(row.source.value),
            _cell(checks or "—"),
            _cell(_outcome(row)),
            _code(row.clause),
        )) + " |")
    common = " and every ".join(_code(e.__name__) for e in lc.COMMON_CHECKS)
    lines += [
        "",
        (f"Before its row is looked up, every {common} event passes that event's common checks "
         "in order (the ordered checks of a pause and of a resume); the first failing check "
         "refuses the event.  A row whose outcome is "
         "a list of states declares both and chooses by the state it starts from: `Reconcile` "
         "returns to `resumable` when the turn checkpoint was recorded and to `paused` when it "
         "was not.  The phase after an accepted event is always the row's declared target."),
    ]
    return "\n".join(lines) + "\n"


def _check_lines(checks: Iterable[lc.Guard], start: int = 1) -> list[str]:
    return [
        f"{n}. {_code(c.name)}: refused with {_code(c.code.value)} "
        f"({_code(c.clause)}): {c.message}."
        for n, c in enumerate(checks, start=start)
    ]


def pause_checks() -> str:
    """The ordered checks of a pause (:data:`pausepoint.core.lifecycle.PAUSE_CHECKS`)."""
    lines = _check_lines(lc.PAUSE_CHECKS)
    row = next(r for r in lc.TABLE if r.event is lc.Pause and r.source == lc.Phase.RUNNING)
    lines.append(f"{len(lc.PAUSE_CHECKS) + 1}. only then is the token minted and the row "
                 f"{_code(row.source.value)} → {_outcome(row).removeprefix('→ ')} taken "
                 f"({_code(row.clause)}).")
    return "\n".join(lines) + "\n"


def resume_checks() -> str:
    """The ordered checks of a resume: the common :data:`pausepoint.core.lifecycle.RESUME_CHECKS`,
    then, by the pause's state, that row's checks and outcome."""
    lines = _check_lines(lc.RESUME_CHECKS)
    lines.append(f"{len(lc.RESUME_CHECKS) + 1}. then, by the state the pause is in:")
    for row in lc.TABLE:
        if row.event is not lc.Resume:
            continue
        steps = [f"{_code(c.name)} → {_code(c.code.value)} ({_code(c.clause)})"
                 for c in row.checks]
        steps.append(f"{_outcome(row)} ({_code(row.clause)})")
        lines.append(f"   - {_code(row.source.value)}: " + "; then ".join(steps))
    return "\n".join(lines) + "\n"


# -- error codes -----------------------------------------------------------------------------


def _clauses_for(code: ErrorCode) -> list[str]:
    """Clauses that refuse with ``code``: those whose lifecycle check or row carries it, and
    those whose summary names it; in catalogue order."""
    found: set[str] = set()
    checks = [*lc.PAUSE_CHECKS, *lc.RESUME_CHECKS]
    for row in lc.TABLE:
        checks.extend(row.checks)
        if row.refuse is code:
            found.add(row.clause)
    found.update(c.clause for c in checks if c.code is code)
    word = re.compile(rf"(?<![a-z_]){re.escape(code.value)}(?![a-z_])")
    found.update(c.id for c in CLAUSES if word.search(c.summary))
    return [c.id for c in CLAUSES if c.id in found]


def error_code_table() -> str:
    """The closed set of error codes (:class:`pausepoint.core.clauses.ErrorCode`) with their
    documentation and the clauses that refuse with each, in declaration order."""
    lines = ["| code | meaning | clauses |", "|---|---|---|"]
    for code in ErrorCode:
        cited = ", ".join(_code(c) for c in _clauses_for(code)) or "—"
        lines.append(f"| {_code(code.value)} | {_cell(ERROR_DOCS[code])} | {cited} |")
    return "\n".join(lines) + "\n"


# -- documents -------------------------------------------------------------------------------


def lifecycle_markdown() -> str:
    """The whole of ``spec/lifecycle.md``."""
    states = ", ".join(_code(p.value) for p in lc.Phase)
    terminal = ", ".join(_code(p.value) for p in lc.Phase if p in lc.TERMINAL)
    return "\n".join((
        ("<!-- GENERATED by pausepoint.system.diagram.lifecycle_markdown() from "
         "pausepoint.core.lifecycle.TABLE; do not edit by hand. -->"),
        "# The lifecycle of one pause point",
        "",
        (f"States: {states}.  Absorbing (terminal): {terminal} "
         f"({_code('lifecycle.terminal.absorbing')}).  The normative text is in "
         "[contract.md](contract.md); this page is drawn from the reference implementation's "
         "transition table, and a test keeps it equal to what the table generates."),
        "",
        "## Diagram",
        "",
        ("Accepting transitions only; every other (event, state) pair is refused and changes "
         f"nothing ({_code('lifecycle.transition.table')}, "
         f"{_code('lifecycle.refusal.no-change')})."),
        "",
        mermaid(),
        "## Ordered checks of a pause",
        "",
        pause_checks(),
        "## Ordered checks of a resume",
        "",
        resume_checks(),
        "## Every row of the table",
        "",
        (f"The table is total: one row for each of the {len(lc.EVENT_TYPES)} events in each of "
         f"the {len(lc.Phase)} states ({len(lc.TABLE)} rows)."),
        "",
        transition_list(),
    ))


# -- clause lines and the clause-id type -------------------------------------------------------


def clause_line(c: Clause) -> str:
    """The line of ``spec/contract.md`` that states clause ``c``: a list item opening with an
    explicit anchor named by the id (so ``[...](#<id>)`` links to it), then the id, the level,
    the group and the catalogue's one-line summary.  The normative refinements follow it,
    indented, written by hand."""
    return (f'- <a id="{c.id}"></a>**`{c.id}`** ({c.level.value}, {c.group.value}) '
            f"{c.summary}")


CLAUSE_LINE_START: Final = re.compile(r'^- (?:<a id="[^"]*"></a>)?\*\*`(?P<id>[^`]+)`\*\*')
"""How a clause line starts, with or without its anchor (a top-level list item opening with a
bold, backticked id)."""


def clause_lines(document: str) -> str:
    """``document`` with every clause line naming a catalogue clause rewritten by
    :func:`clause_line`; other lines (and lines naming no clause) are left as they are."""
    out = []
    for line in document.split("\n"):
        m = CLAUSE_LINE_START.match(line)
        c = CLAUSE_BY_ID.get(m["id"]) if m else None
        out.append(clause_line(c) if c is not None else line)
    return "\n".join(out)


CLAUSE_IDS_PATH: Final = "reference/pausepoint/core/clause_ids.py"
"""Where :func:`clause_ids_module` is committed, from the repository's root."""


def clause_ids_module() -> str:
    """The source of :mod:`pausepoint.core.clause_ids`: the ``Literal`` of every clause id, in
    catalogue order."""
    return "\n".join((
        '"""Every clause id of :data:`pausepoint.core.clauses.CLAUSES`, as a type: cite a clause',
        "with a :data:`ClauseId` and mypy catches a mistyped id.",
        "",
        "GENERATED by :func:`pausepoint.system.diagram.clause_ids_module` from the catalogue; do",
        "not edit by hand.  A test keeps this file equal to what the catalogue generates; to",
        "regenerate, see the module docstring of :mod:`pausepoint.system.diagram`.",
        '"""',
        "",
        "from typing import Literal",
        "",
        "ClauseId = Literal[",
        *(f'    "{c.id}",' for c in CLAUSES),
        "]",
        '"""The id of a clause of the catalogue, e.g. ``"resume.consume.single-winner"``."""',
        "",
    ))


# -- the contract --------------------------------------------------------------------------


SECTIONS: Final[dict[str, Callable[[], str]]] = {
    "error-codes": error_code_table,
    "transitions": transition_list,
    "pause-checks": pause_checks,
    "resume-checks": resume_checks,
}
"""Generated sections of ``spec/contract.md``, by marker name."""


def begin_marker(name: str) -> str:
    return f"<!-- BEGIN GENERATED: {name} -->"


def end_marker(name: str) -> str:
    return f"<!-- END GENERATED: {name} -->"


_SECTION_RE: Final = re.compile(
    r"^<!-- BEGIN GENERATED: (?P<name>[a-z0-9-]+) -->\n(?P<body>.*?)"
    r"^<!-- END GENERATED: (?P=name) -->$", re.DOTALL | re.MULTILINE)


def generated_sections(document: str) -> dict[str, str]:
    """The body of every generated section of ``document``, by marker name."""
    return {m["name"]: m["body"] for m in _SECTION_RE.finditer(document)}


def splice(document: str, name: str, body: str) -> str:
    """``document`` with the body of section ``name`` replaced by ``body``.

    Raises :class:`ValueError` when the section's markers are missing or appear more than
    once."""
    begin, end = begin_marker(name), end_marker(name)
    if document.count(begin) != 1 or document.count(end) != 1:
        raise ValueError(f"section {name!r} needs exactly one {begin} and one {end}")
    head, rest = document.split(begin + "\n", 1)
    _, tail = rest.split(end, 1)
    return head + begin + "\n" + body + end + tail


def regenerate(document: str) -> str:
    """``document`` with every clause line rewritten by :func:`clause_line` and every generated
    section it has rewritten from :data:`SECTIONS`."""
    document = clause_lines(document)
    for name in generated_sections(document):
        document = splice(document, name, SECTIONS[name]())
    return document

