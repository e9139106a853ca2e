"""Line and branch coverage of a golden function body by recorded calls, and case selection that covers it.

The recorder traces the (from line, to line) arcs each call of a goal function takes (see
``runtime/lmrbench_record.py``). Here the ``coverage`` package's parser supplies what there is to cover: the
body's statements, and its branches (the arcs leaving a line that has more than one exit). Calls are picked
greedily by the arcs they add, then by call shape, then in the order they happened.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterable

from coverage.parser import PythonParser

from lmrbench import pyparse
from lmrbench.authoring.record.recorded_call import Arc, RecordedCall
from lmrbench.schemas.recording import BodyCoverage


def coverage_text(c: BodyCoverage) -> str:
    """``lines 14/14, branches 2/2`` plus what is missing."""
    out = f"lines {c.lines_covered}/{c.lines_total}"
    if c.branches_total:
        out += f", branches {c.branches_covered}/{c.branches_total}"
    if c.missing_lines:
        out += f"; never run: line {_ranges(c.missing_lines)}"
    if c.reached_not_kept:
        out += f" (lines {_ranges(c.reached_not_kept)} ran in calls not kept)"
    return out


def _ranges(lines: list[int]) -> str:
    parts: list[str] = []
    start = prev = lines[0]
    for n in [*lines[1:], None]:
        if n is not None and n == prev + 1:
            prev = n
            continue
        parts.append(f"{start}" if start == prev else f"{start}-{prev}")
        if n is not None:
            start = prev = n
    return ", ".join(parts)


class BodyModel:
    """The statements and branches of one function of a source file."""

    def __init__(self, source: str, qualname: str) -> None:
        self.qualname = qualname
        parser = PythonParser(text=source)
        parser.parse_source()
        self._first = parser.first_line
        node = pyparse.find_def(pyparse.parse(source), qualname)
        if node is None:
            self.statements: set[int] = set()
            self.branches: set[Arc] = set()
            return
        body = node.body
        doc = body[0] if body and _is_docstring(body[0]) else None
        start = (body[1].lineno if len(body) > 1 else node.end_lineno or 0) if doc else body[0].lineno
        end = node.end_lineno or start
        self.statements = {ln for ln in parser.statements if start <= ln <= end}
        exits = parser.exit_counts()
        self.branches = {(a, b) for a, b in parser.arcs() if a in self.statements and exits.get(a, 0) > 1}

    def normalize(self, arcs: Iterable[Iterable[int]]) -> set[Arc]:
        """Traced arcs mapped onto statement first lines (multi-line statements report later lines)."""
        out: set[Arc] = set()
        for a, b in arcs:
            out.add((self._first(a) if a > 0 else a, self._first(b) if b > 0 else b))
        return out

    def measure(self, target: str, arcs: set[Arc], reached: set[Arc] | None = None) -> BodyCoverage:
        """Coverage of the body by ``arcs`` (normalized); ``reached``: what the whole run took (normalized)."""
        lines = {b for _, b in arcs if b > 0} | {a for a, _ in arcs if a > 0}
        covered = self.statements & lines
        missing = sorted(self.statements - covered)
        run = {b for _, b in reached or set() if b > 0}
        return BodyCoverage(
            target=target, lines_total=len(self.statements), lines_covered=len(covered),
            branches_total=len(self.branches), branches_covered=len(self.branches & arcs),
            missing_lines=missing, reached_not_kept=sorted(set(missing) & run),
        )


def _is_docstring(stmt: ast.stmt) -> bool:
    return isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant) and isinstance(stmt.value.value, str)


def cover_greedy(calls: list[RecordedCall], n: int, model: BodyModel) -> list[int]:
    """Up to ``n`` indices of calls, greedily those adding the most uncovered arcs of the body (branches count
    double); none once no call adds an arc."""
    picked: list[int] = []
    arcs = [model.normalize(c.arcs or ()) for c in calls]
    covered: set[Arc] = set()
    while len(picked) < n:
        gains = [(len(a - covered) + len((a & model.branches) - covered), -i)
                 for i, a in enumerate(arcs) if i not in picked]
        if not gains or max(gains)[0] == 0:
            break
        best = -max(gains)[1]
        picked.append(best)
        covered |= arcs[best]
    return picked


def pick_cases(
    calls: list[RecordedCall], n: int, model: BodyModel | None, shape: Callable[[RecordedCall], str]
) -> list[RecordedCall]:
    """``n`` calls, in the order they happened: first greedily those adding the most uncovered arcs of the body
    (``cover_greedy``), then one of each call shape not yet picked, then the earliest others."""
    picked: list[int] = cover_greedy(calls, n, model) if model is not None else []
    shapes = {shape(calls[i]) for i in picked}
    for i, call in enumerate(calls):
        if len(picked) >= n:
            break
        if i not in picked and (s := shape(call)) not in shapes:
            shapes.add(s)
            picked.append(i)
    picked += [i for i in range(len(calls)) if i not in picked][: n - len(picked)]
    return [calls[i] for i in sorted(picked)]
