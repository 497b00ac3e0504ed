"""The clause catalogue, the normative spec and every citation of a clause id stay in lockstep.

* ``spec/contract.md`` carries every clause of :data:`pausepoint.core.clauses.CLAUSES` exactly
  once, as the line :func:`pausepoint.system.diagram.clause_line` renders --
  ``- <a id="<id>"></a>**`<id>`** (<LEVEL>, <group>) <summary>`` with the catalogue's own
  summary, level and group;
* every link to an anchor in the spec lands on an anchor that exists, and the contract refers
  to clauses by anchor, never by section number;
* :data:`pausepoint.core.clause_ids.ClauseId` is exactly what the catalogue generates, and mypy
  refuses a mistyped clause id;
* every string in the repository that looks like a clause id (a quoted or backticked dotted
  lowercase slug whose first segment starts some clause id) names a clause of the catalogue;
* every MUST clause is cited by a test under ``tests/`` or a conformance check under
  ``conformance/`` -- or is listed, with a reason, in ``spec/known-limitations.md``, and that
  list names only clauses nothing cites yet;
* the error codes are a closed, documented set, every one of them in the contract.

Each checker is a pure function from text to a list of problems; the tests run it on the real
files (no problems expected) and on deliberately broken input (problems expected), so each
check is shown to be able to fail.
"""

from __future__ import annotations

import os
import re
import typing
from collections.abc import Iterable, Iterator
from pathlib import Path

import attrs
import pytest

from pausepoint.core.clause_ids import ClauseId
from pausepoint.core.clauses import CLAUSE_BY_ID, CLAUSES, ERROR_DOCS, Clause, ErrorCode, Level
from pausepoint.system import diagram

ROOT = Path(__file__).resolve().parents[1]
SPEC = ROOT / "spec"
CONTRACT = SPEC / "contract.md"
KNOWN_LIMITATIONS = SPEC / "known-limitations.md"
NO_SUCH_ID = "lifecycle" + ".no-such-clause"  # built, so that this file does not cite it

# -- the contract's clause lines -------------------------------------------------------------

CLAUSE_LINE = re.compile(
    r'^- <a id="(?P<anchor>[^"]*)"></a>\*\*`(?P<id>[^`]+)`\*\* '
    r"\((?P<level>[A-Z]+), (?P<group>[a-z-]+)\) (?P<summary>.+)$")
CLAUSE_FORM = re.compile(r'^\s*[-*+]\s+(?:<a id="[^"]*"></a>)?\*\*`')
"""Any line using the clause form (at any indentation); each must be a well-formed clause line."""


@attrs.frozen
class ClauseLine:
    lineno: int
    anchor: str
    id: str
    level: str
    group: str
    summary: str


def clause_lines(text: str) -> tuple[list[ClauseLine], list[str]]:
    """The clause lines of a contract, and the problems with lines that use the clause form
    without being well-formed clause lines."""
    found: list[ClauseLine] = []
    problems: list[str] = []
    for n, line in enumerate(text.splitlines(), start=1):
        if not CLAUSE_FORM.match(line):
            continue
        m = CLAUSE_LINE.match(line)
        if m is None:
            problems.append(f"line {n}: uses the clause form but is not "
                            f"'- <a id=\"<id>\"></a>**`<id>`** (<LEVEL>, <group>) <summary>': "
                            f"{line!r}")
            continue
        found.append(ClauseLine(n, m["anchor"], m["id"], m["level"], m["group"], m["summary"]))
    return found, problems


def contract_problems(text: str, catalogue: Iterable[Clause] = CLAUSES) -> list[str]:
    """Everything that keeps ``text`` from carrying exactly the clauses of ``catalogue``."""
    by_id = {c.id: c for c in catalogue}
    lines, problems = clause_lines(text)
    seen: dict[str, int] = {}
    for cl in lines:
        if cl.id in seen:
            problems.append(f"line {cl.lineno}: clause {cl.id!r} appears again "
                            f"(first on line {seen[cl.id]})")
            continue
        seen[cl.id] = cl.lineno
        c = by_id.get(cl.id)
        if c is None:
            problems.append(f"line {cl.lineno}: clause {cl.id!r} is not in the catalogue")
            continue
        if cl.anchor != cl.id:
            problems.append(f"line {cl.lineno}: clause {cl.id!r} is anchored as {cl.anchor!r}")
        if cl.summary != c.summary:
            problems.append(f"line {cl.lineno}: summary of {cl.id!r} differs from clauses.py:"
                            f"\n    contract: {cl.summary}\n    catalogue: {c.summary}")
        if cl.level != c.level.value:
            problems.append(f"line {cl.lineno}: {cl.id!r} is {cl.level} in the contract, "
                            f"{c.level.value} in the catalogue")
        if cl.group != c.group.value:
            problems.append(f"line {cl.lineno}: {cl.id!r} is in group {cl.group} in the "
                            f"contract, {c.group.value} in the catalogue")
    for cid in by_id:
        if cid not in seen:
            problems.append(f"clause {cid!r} of the catalogue is missing from the contract")
    return problems


def test_catalogue_ids_are_unique_stable_slugs() -> None:
    ids = [c.id for c in CLAUSES]
    assert len(ids) == len(set(ids)), sorted({i for i in ids if ids.count(i) > 1})
    slug = re.compile(r"[a-z][a-z0-9]*(?:-[a-z0-9]+)*(?:\.[a-z][a-z0-9]*(?:-[a-z0-9]+)*)+")
    assert [i for i in ids if not slug.fullmatch(i)] == []
    assert all(c.summary.strip() == c.summary and c.summary for c in CLAUSES)


def test_contract_carries_every_clause_exactly_once() -> None:
    """contract.md ⇄ clauses.py: same ids, summaries, levels and groups; no duplicates, no
    malformed clause lines."""
    problems = contract_problems(CONTRACT.read_text(encoding="utf-8"))
    assert not problems, "spec/contract.md and clauses.py disagree:\n" + "\n".join(problems)


def _contract_line(c: Clause) -> str:
    return diagram.clause_line(c)


def test_contract_checker_catches_drift() -> None:
    """The checker above reports each kind of drift (so its silence on the real file means
    something)."""
    a, b = CLAUSES[0], CLAUSES[1]
    good = "\n".join([_contract_line(a), "  refinement", _contract_line(b)])
    assert contract_problems(good, [a, b]) == []
    cases = {
        "missing": _contract_line(a),
        "again": good + "\n" + _contract_line(b),
        "not in the catalogue": good + "\n" + _contract_line(attrs.evolve(a, id=NO_SUCH_ID)),
        "summary": good.replace(a.summary, a.summary + " Extra."),
        "MUST in the catalogue": good.replace("(MUST,", "(SHOULD,", 1),
        "in group": good.replace(f", {a.group.value})", ", tokens)", 1),
        "uses the clause form": good + "\n  - **`lifecycle.states`** is cited here",
        "anchored as": good.replace(f'<a id="{a.id}">', '<a id="elsewhere">', 1),
    }
    for expected, text in cases.items():
        problems = contract_problems(text, [a, b])
        assert any(expected in p for p in problems), (expected, problems)


# -- the generated clause-id type -------------------------------------------------------------

CLAUSE_IDS_FILE = ROOT / diagram.CLAUSE_IDS_PATH


def test_clause_id_type_is_what_the_catalogue_generates() -> None:
    assert CLAUSE_IDS_FILE.read_text(encoding="utf-8") == diagram.clause_ids_module(), (
        f"{diagram.CLAUSE_IDS_PATH} is stale; regenerate it (see pausepoint.system.diagram)")
    assert typing.get_args(ClauseId) == tuple(c.id for c in CLAUSES)


def test_clause_id_module_comparison_can_fail() -> None:
    """A catalogue with one clause more generates another module (so the test above can fail)."""
    extra = attrs.evolve(CLAUSES[0], id=NO_SUCH_ID)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(diagram, "CLAUSES", (*CLAUSES, extra))
        assert diagram.clause_ids_module() != CLAUSE_IDS_FILE.read_text(encoding="utf-8")
        assert f'    "{NO_SUCH_ID}",' in diagram.clause_ids_module()


MISTYPED = "resume" + ".expiri"  # built, so that this file does not cite it


def test_mypy_refuses_a_mistyped_clause_id(tmp_path: Path) -> None:
    """A clause id is a ``ClauseId``: citing one that is not in the catalogue fails mypy, the
    correctly spelled one on the line before passes."""
    api = pytest.importorskip("mypy.api")
    snippet = tmp_path / "cites.py"
    snippet.write_text("\n".join([
        "from pausepoint.core.clauses import ErrorCode",
        "from pausepoint.core.errors import PausepointError",
        "",
        'PausepointError(ErrorCode.PAUSE_EXPIRED, "resume.expiry", "cited right")',
        f'PausepointError(ErrorCode.PAUSE_EXPIRED, "{MISTYPED}", "cited wrong")',
        "",
    ]), encoding="utf-8")
    out, err, status = api.run(["--strict", "--no-incremental", "--cache-dir", os.devnull,
                                "--no-error-summary", str(snippet)])
    errors = [line for line in out.splitlines() if ": error:" in line]
    assert status == 1, (out, err)
    assert len(errors) == 1, out
    assert errors[0].startswith(f"{snippet}:5: error:") and MISTYPED in errors[0], out


# -- anchors and links ------------------------------------------------------------------------

ANCHOR = re.compile(r'<a id="(?P<id>[^"]+)"></a>')
LINK = re.compile(r"\]\((?P<file>[^)#\s]*)#(?P<frag>[^)\s]+)\)")
LINKED_DOCS = ("spec", "docs")


HEADING = re.compile(r"^#{1,6} +(?P<title>.+?) *$", re.MULTILINE)


def heading_slug(title: str) -> str:
    """The anchor a Markdown renderer (GitHub's rule) gives a heading: lower case, punctuation
    but hyphens and underscores dropped, spaces made hyphens."""
    return re.sub(r"[^\w\- ]", "", title.strip().lower()).replace(" ", "-")


def link_problems(docs: dict[str, str]) -> list[str]:
    """Every ``[...](file.md#anchor)`` or ``[...](#anchor)`` link in ``docs`` (path -> text,
    paths relative to the repository) whose target document or anchor (explicit, or a
    heading's) does not exist, and every explicit anchor defined twice in one document."""
    anchors = {path: [m["id"] for m in ANCHOR.finditer(text)] for path, text in docs.items()}
    problems = [f"{path}: anchor {a!r} is defined {ids.count(a)} times"
                for path, ids in anchors.items() for a in sorted(set(ids)) if ids.count(a) > 1]
    for path, text in docs.items():
        anchors[path] += [heading_slug(m["title"]) for m in HEADING.finditer(text)]
    for path, text in docs.items():
        for n, line in enumerate(text.splitlines(), start=1):
            for m in LINK.finditer(line):
                if "://" in m["file"]:
                    continue
                target = (str(Path(path).parent / m["file"]) if m["file"] else path)
                target = str(Path(os.path.normpath(target)))
                if target not in anchors:
                    problems.append(f"{path}:{n}: links to {m[0][2:-1]!r}, which is not a "
                                    "document here")
                elif m["frag"] not in anchors[target]:
                    problems.append(f"{path}:{n}: links to #{m['frag']}, which {target} does "
                                    "not define")
    return problems


def _linked_docs() -> dict[str, str]:
    files = [p for d in LINKED_DOCS for p in sorted((ROOT / d).rglob("*.md"))]
    files.append(ROOT / "README.md")
    return {str(p.relative_to(ROOT)): p.read_text(encoding="utf-8") for p in files}


def test_every_anchor_link_lands() -> None:
    docs = _linked_docs()
    assert LINK.search(docs["spec/contract.md"]), "the contract links to no anchor at all?"
    problems = link_problems(docs)
    assert not problems, "\n".join(problems)


def test_every_clause_is_anchored_by_its_id() -> None:
    anchors = {m["id"] for m in ANCHOR.finditer(CONTRACT.read_text(encoding="utf-8"))}
    assert {c.id for c in CLAUSES} <= anchors


def test_link_check_catches_broken_links() -> None:
    good = f'- <a id="{CLAUSES[0].id}"></a>x\nsee [it](#{CLAUSES[0].id})\n'
    assert link_problems({"spec/a.md": good, "spec/b.md": f"[a](a.md#{CLAUSES[0].id})"}) == []
    headed = {"docs/a.md": "## A rule, and an Exception\n[r](#a-rule-and-an-exception)\n"}
    assert link_problems(headed) == []
    assert len(link_problems({"docs/a.md": headed["docs/a.md"] + "[x](#a-rule)\n"})) == 1
    broken = {"spec/a.md": good + "[gone](#no-such-anchor)\n" + '<a id="x"></a><a id="x"></a>',
              "spec/b.md": f"[a](c.md#{CLAUSES[0].id}) [w](https://example.org/#x)"}
    problems = link_problems(broken)
    assert len(problems) == 3, problems
    assert any("#no-such-anchor" in p for p in problems)
    assert any("defined 2 times" in p for p in problems)
    assert any("not a document" in p for p in problems)


def test_contract_refers_by_anchor_not_section_number() -> None:
    text = CONTRACT.read_text(encoding="utf-8")
    numbered = [n for n, line in enumerate(text.splitlines(), start=1) if "§" in line]
    assert numbered == [], f"spec/contract.md refers by section number on lines {numbered}"


# -- citations of clause ids anywhere --------------------------------------------------------

SCAN_DIRS = ("reference", "conformance", "tests", "docs", "spec", "tla")
SCAN_SUFFIXES = frozenset({".py", ".md", ".json", ".tla"})
FIRST_SEGMENTS = frozenset(c.id.split(".")[0] for c in CLAUSES)
FILE_SUFFIXES = frozenset({
    "py", "pyi", "md", "json", "jsonl", "tla", "cfg", "toml", "txt", "yaml", "yml", "sql", "db",
    "sqlite", "sqlite3", "sh", "html", "xml", "ini", "log", "csv", "out", "lock", "jar"})
SLUG = r"[a-z][a-z0-9_-]*(?:\.[a-z0-9_-]+)+"
QUOTED = re.compile(rf"""(["'])({SLUG})\1""")
BACKTICKED = re.compile(rf"(`+)({SLUG})\1")


@attrs.frozen
class Citation:
    path: str
    lineno: int
    id: str


def looks_like_clause_id(candidate: str) -> bool:
    parts = candidate.split(".")
    return parts[0] in FIRST_SEGMENTS and parts[-1] not in FILE_SUFFIXES


def citations_in(text: str, path: str) -> Iterator[Citation]:
    """Quoted strings and backticked words of ``text`` that look like clause ids."""
    for n, line in enumerate(text.splitlines(), start=1):
        for pattern in (QUOTED, BACKTICKED):
            for m in pattern.finditer(line):
                if looks_like_clause_id(m[2]):
                    yield Citation(path, n, m[2])


def scanned_files(dirs: Iterable[str] = SCAN_DIRS) -> Iterator[Path]:
    for d in dirs:
        base = ROOT / d
        if not base.is_dir():
            continue
        for p in sorted(base.rglob("*")):
            if p.is_file() and p.suffix in SCAN_SUFFIXES and "__pycache__" not in p.parts:
                yield p


def all_citations(dirs: Iterable[str] = SCAN_DIRS) -> list[Citation]:
    out: list[Citation] = []
    for p in scanned_files(dirs):
        out.extend(citations_in(p.read_text(encoding="utf-8", errors="replace"),
                                str(p.relative_to(ROOT))))
    return out


def unknown_citations(cites: Iterable[Citation]) -> list[str]:
    return [f"{c.path}:{c.lineno}: {c.id!r} is not a clause id"
            for c in cites if c.id not in CLAUSE_BY_ID]


def test_every_cited_clause_id_exists() -> None:
    """A string that looks like a clause id and names no clause is a typo (or a clause that was
    never added to the catalogue).  To mention a Python name that merely looks like one, write
    it module-qualified (``pausepoint.core.lifecycle.step``)."""
    cites = all_citations()
    assert cites, "the scan found no citations at all; is it looking in the right place?"
    bad = unknown_citations(cites)
    assert not bad, "unknown clause ids cited:\n" + "\n".join(bad)


def test_citation_scan_finds_typos() -> None:
    # Written with '@' for '.', so that this file does not itself cite the typos.
    text = "\n".join([
        'assert err.clause == clause("resume@consume@single-winer")',
        "  (``token@integrity``, `expiry@no-consume-afterr`)",
        "'lifecycle@states' \"pause@py\" `run@db` `pausepoint@lifecycle` `lifecycle@TABLE`",
    ]).replace("@", ".")
    cites = list(citations_in(text, "x.py"))
    typo1, typo2 = "resume@consume@single-winer".replace("@", "."), \
        "expiry@no-consume-afterr".replace("@", ".")
    assert [(c.lineno, c.id) for c in cites] == [
        (1, typo1), (2, "token.integrity"), (2, typo2), (3, "lifecycle.states")]
    assert unknown_citations(cites) == [f"x.py:1: {typo1!r} is not a clause id",
                                        f"x.py:2: {typo2!r} is not a clause id"]


# -- every MUST clause is tested, or a known limitation ---------------------------------------

META_TESTS = frozenset({"tests/test_clauses.py", "tests/test_cli_clauses.py",
                        "tests/test_diagram.py"})
"""Tests about the catalogue itself: they mention clause ids without exercising them."""


CHECK_WORDS = ("check", "suite", "vector", "scenario", "framework")


def is_check_source(path: str) -> bool:
    """Files whose citations count as a clause being tested: tests under ``tests/`` (not the
    catalogue's own meta-tests), and under ``conformance/`` the checks, suites, the check
    framework (its checks run on every observation), scenario generators and vectors -- files
    or folders whose name contains one of :data:`CHECK_WORDS` -- and every ``.json`` file.
    Adapters and command-line modules (``cmd_*.py``) cite clauses in the refusals they raise or
    the lists they print, which is not testing them."""
    if path in META_TESTS:
        return False
    if path.startswith("tests/"):
        return True
    if not path.startswith("conformance/"):
        return False
    p = Path(path)
    if p.name.startswith("cmd_"):
        return False
    if p.suffix == ".json":
        return True
    return any(w in part for part in p.parts[1:] for w in CHECK_WORDS)


_BARE_ID = re.compile(
    "|".join(rf"(?<![\w.-]){re.escape(c.id)}(?![\w-]|\.\w)"
             for c in sorted(CLAUSES, key=lambda c: -len(c.id))))


def bare_mentions(text: str, path: str) -> Iterator[Citation]:
    """Catalogue ids written without quotes or backticks (``\"\"\"input.bounded: ...\"\"\"``).
    Only exact ids are recognised -- bare dotted words are far too often Python attribute
    access to be checked for typos -- so these count towards coverage, not towards the typo
    check: cite with backticks or a ``clause("...")`` call to get both."""
    for n, line in enumerate(text.splitlines(), start=1):
        for m in _BARE_ID.finditer(line):
            yield Citation(path, n, m[0])


def coverage_citations(dirs: Iterable[str] = ("tests", "conformance")) -> list[Citation]:
    """Citations and bare mentions in the files whose citations count as coverage."""
    out: list[Citation] = []
    for p in scanned_files(dirs):
        rel = str(p.relative_to(ROOT))
        if is_check_source(rel):
            text = p.read_text(encoding="utf-8", errors="replace")
            out.extend(citations_in(text, rel))
            out.extend(bare_mentions(text, rel))
    return out


def ids_tested_by(cites: Iterable[Citation]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for c in cites:
        where = f"{c.path}:{c.lineno}"
        if is_check_source(c.path) and c.id in CLAUSE_BY_ID and where not in out.get(c.id, ()):
            out.setdefault(c.id, []).append(where)
    return out


KNOWN_ENTRY = re.compile(r"^- `(?P<id>[^`]+)` — (?P<reason>\S.*)$")


def known_limitations(text: str) -> tuple[dict[str, str], list[str]]:
    """The entries of ``spec/known-limitations.md`` (id -> reason) and the problems with it:
    every list item starting with a backticked word must be an entry ``- `<id>` — <reason>``
    naming a catalogue clause, once."""
    entries: dict[str, str] = {}
    problems: list[str] = []
    for n, line in enumerate(text.splitlines(), start=1):
        if not line.startswith("- `"):
            continue
        m = KNOWN_ENTRY.match(line)
        if m is None:
            problems.append(f"line {n}: not '- `<clause id>` — <reason>': {line!r}")
            continue
        cid = m["id"]
        if cid not in CLAUSE_BY_ID:
            problems.append(f"line {n}: {cid!r} is not a clause id")
            continue
        if cid in entries:
            problems.append(f"line {n}: {cid!r} is listed twice")
        entries[cid] = m["reason"]
    return entries, problems


def coverage_problems(tested: dict[str, list[str]], known: dict[str, str]) -> list[str]:
    """MUST clauses neither tested nor listed, and listed clauses that are tested after all."""
    problems = []
    untested = [c for c in CLAUSES if c.level is Level.MUST
                and c.id not in tested and c.id not in known]
    if untested:
        problems.append(
            f"{len(untested)} MUST clause(s) are cited by no test under tests/ and no check "
            "under conformance/, and are not listed in spec/known-limitations.md:\n"
            + "\n".join(f"    {c.id}  ({c.group.value}) {c.summary}" for c in untested))
    stale = sorted(set(known) & set(tested))
    if stale:
        problems.append(
            "spec/known-limitations.md lists clause(s) that ARE cited by a test or check; "
            "remove them from the list:\n"
            + "\n".join(f"    {cid}  cited at {', '.join(tested[cid][:3])}" for cid in stale))
    return problems


def test_known_limitations_file_is_well_formed() -> None:
    _, problems = known_limitations(KNOWN_LIMITATIONS.read_text(encoding="utf-8"))
    assert not problems, "\n".join(problems)


def test_every_must_clause_is_tested_or_a_known_limitation() -> None:
    """Every MUST clause is cited by a test or conformance check, or listed in
    spec/known-limitations.md -- and that list names no clause that is cited."""
    known, _ = known_limitations(KNOWN_LIMITATIONS.read_text(encoding="utf-8"))
    problems = coverage_problems(ids_tested_by(coverage_citations()), known)
    assert not problems, "\n\n".join(problems)


def test_coverage_check_catches_untested_and_stale() -> None:
    a, b = [c for c in CLAUSES if c.level is Level.MUST][:2]
    everything = {c.id: ["tests/x.py:1"] for c in CLAUSES}
    assert coverage_problems(everything, {}) == []
    del everything[a.id]
    (untested,) = coverage_problems(everything, {})
    assert a.id in untested and "1 MUST clause(s)" in untested
    assert coverage_problems(everything, {a.id: "not yet covered by a test"}) == []
    (stale,) = coverage_problems(everything, {a.id: "reason", b.id: "reason"})
    assert b.id in stale and "ARE cited" in stale and a.id not in stale


def test_known_limitations_parser_catches_bad_entries() -> None:
    cid = CLAUSES[0].id
    text = "\n".join([f"- `{cid}` — not yet covered by a test", f"- `{cid}` — again",
                      f"- `{NO_SUCH_ID}` — reason", f"- `{cid}`", "* prose"])
    entries, problems = known_limitations(text)
    assert entries == {cid: "again"}
    assert [p.split(":")[0] for p in problems] == ["line 2", "line 3", "line 4"]


def test_bare_mentions_find_exact_ids_only() -> None:
    text = '"""input.bounded, pause.payload.schema: x"""  run.status  token.claims_x  ' \
        'token.claims.y  (resume.expiry)'
    assert [c.id for c in bare_mentions(text, "t.py")] == [
        "input.bounded", "pause.payload.schema", "resume.expiry"]


def test_meta_tests_do_not_count_as_coverage() -> None:
    cites = [Citation("tests/test_clauses.py", 1, CLAUSES[0].id),
             Citation("conformance/pausepoint_conformance/cmd_clauses.py", 1, CLAUSES[0].id),
             Citation("reference/pausepoint/lifecycle.py", 1, CLAUSES[0].id),
             Citation("conformance/pausepoint_conformance/reference_adapter.py", 1,
                      CLAUSES[0].id),
             Citation("tests/test_x.py", 1, CLAUSES[1].id),
             Citation("conformance/pausepoint_conformance/checks.py", 1, CLAUSES[2].id),
             Citation("conformance/vectors/core.json", 1, CLAUSES[3].id),
             Citation("conformance/pausepoint_conformance/suite/pause.py", 1, CLAUSES[4].id)]
    assert set(ids_tested_by(cites)) == {c.id for c in CLAUSES[1:5]}


# -- error codes -----------------------------------------------------------------------------


def test_error_codes_are_a_closed_documented_set() -> None:
    values = [c.value for c in ErrorCode]
    assert len(values) == len(set(values)), "duplicate error code values"
    snake = re.compile(r"[a-z]+(?:_[a-z]+)*")
    assert [v for v in values if not snake.fullmatch(v)] == []
    assert set(ERROR_DOCS) == set(ErrorCode), set(ErrorCode) ^ set(ERROR_DOCS)
    assert [c for c, doc in ERROR_DOCS.items() if not doc.strip()] == []


def test_every_error_code_is_in_the_contract() -> None:
    text = CONTRACT.read_text(encoding="utf-8")
    missing = [c.value for c in ErrorCode if f"`{c.value}`" not in text]
    assert not missing, f"error codes missing from spec/contract.md: {missing}"


def test_clause_summaries_name_only_real_error_codes() -> None:
    """A summary that says 'refused with <code>' names a code of the closed set."""
    codes = {c.value for c in ErrorCode}
    bad = []
    for c in CLAUSES:
        for word in re.findall(r"\b(?:with|otherwise) ([a-z]+_[a-z_]+)\b", c.summary):
            if word not in codes:
                bad.append((c.id, word))
    assert bad == []


@pytest.mark.parametrize("code", list(ErrorCode))
def test_error_code_has_a_row_in_the_generated_table(code: ErrorCode) -> None:
    text = CONTRACT.read_text(encoding="utf-8")
    begin = text.index("<!-- BEGIN GENERATED: error-codes -->")
    end = text.index("<!-- END GENERATED: error-codes -->")
    doc = ERROR_DOCS[code].replace("|", "\\|")
    assert f"| `{code.value}` | {doc} |" in text[begin:end]


# -- the named invariants --------------------------------------------------------------------


def invariant_rows(text: str) -> dict[str, list[str]]:
    """The rows of the contract's invariants table: name -> clause ids."""
    section = text[text.index("## 16. Invariants"):]
    rows: dict[str, list[str]] = {}
    for line in section.splitlines():
        m = re.match(r"^\| `(\w+)` \| [^|]+ \| (.+) \|$", line)
        if m:
            rows[m[1]] = re.findall(r"`([^`]+)`", m[2])
    return rows


def test_invariants_table_names_every_invariant_of_the_code() -> None:
    """The contract names exactly the invariants the model and the lifecycle check, each mapped
    to catalogue clauses; the model registers each invariant under its function's own name
    (the name TLA+ uses too), so a reader of either finds the other."""
    from pausepoint.core import lifecycle
    from pausepoint.system import model

    misnamed = {name: f.__name__ for name, f in model.INVARIANTS.items() if f.__name__ != name}
    assert misnamed == {}, f"registered under another name: {misnamed}"
    rows = invariant_rows(CONTRACT.read_text(encoding="utf-8"))
    expected = {*model.INVARIANTS, *(f.__name__ for f in lifecycle.PAUSE_INVARIANTS),
                model.terminal_absorbing.__name__}
    assert set(rows) == expected, set(rows) ^ expected
    assert all(rows.values()), [name for name, ids in rows.items() if not ids]
    assert {cid for ids in rows.values() for cid in ids} <= set(CLAUSE_BY_ID)


def test_invariants_table_parser_sees_rows() -> None:
    text = "## 16. Invariants\n| `A` | x | `lifecycle.states`, `resume.expiry` |\n| `b` | y |"
    assert invariant_rows(text) == {"A": ["lifecycle.states", "resume.expiry"]}
