"""Find functions by qualified name in a source with LibCST, parsing only the top-level statements needed.

``ast`` (fast) checks the syntax and finds which top-level statements hold the wanted functions; LibCST parses
just those statements (a top-level statement always starts on a fresh line, so its lines are a module of their
own), and every other byte of the source is copied unchanged. Qualified names follow ``core/source/index.py``.
"""

from __future__ import annotations

import ast
import difflib
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field

import libcst as cst

from lmrbench.core.source.index import (
    FunctionInfo,
    index_tree,
    is_overload_decorator,
    name_segment,
    parse_python,
)
from lmrbench.errors import LmrError

_SENTINEL = "pass\n"
_NEWLINE = re.compile(r"\r\n|\r|\n")
_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")


def line_starts(source: str) -> list[int]:
    """Offset of the start of each line (index 0 is line 1), splitting the way Python's tokenizer does."""
    starts = [0]
    starts.extend(m.end() for m in _LINE.finditer(source))
    return starts


def _dotted(expr: cst.BaseExpression) -> str:
    parts: list[str] = []
    while isinstance(expr, cst.Attribute):
        parts.append(expr.attr.value)
        expr = expr.value
    if isinstance(expr, cst.Name):
        parts.append(expr.value)
        return ".".join(reversed(parts))
    return ""


def _first_line(node: ast.stmt) -> int:
    """The first line of a top-level statement, its decorators included."""
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) and node.decorator_list:
        return node.decorator_list[0].lineno
    return node.lineno


def decorator_names(node: cst.FunctionDef) -> tuple[str, ...]:
    """Dotted names of a def's decorators ("" for a decorator that is not a plain dotted name)."""
    return tuple(_dotted(d.decorator) for d in node.decorators)


def outermost(qualnames: list[str]) -> list[str]:
    """The names without duplicates and without those inside another named function (it covers them)."""
    unique = list(dict.fromkeys(qualnames))
    return [q for q in unique if not any(q.startswith(p + ".") for p in unique)]


class _Collector(cst.CSTVisitor):
    """Qualified name -> defs (in source order), skipping overload stubs."""

    def __init__(self) -> None:
        self.scope: list[str] = []
        self.found: dict[str, list[cst.FunctionDef]] = {}

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        self.scope.append(node.name.value)
        return True

    def leave_ClassDef(self, original_node: cst.ClassDef) -> None:
        self.scope.pop()

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        decos = decorator_names(node)
        self.scope.append(name_segment(node.name.value, decos))
        if not any(is_overload_decorator(d) for d in decos):
            self.found.setdefault(".".join(self.scope), []).append(node)
        return True

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self.scope.pop()

    def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> bool:
        return False

    def visit_Decorator(self, node: cst.Decorator) -> bool:
        return False

    def visit_Parameters(self, node: cst.Parameters) -> bool:
        return False


class _Replacer(cst.CSTTransformer):
    def __init__(self, replace: Mapping[int, cst.FunctionDef]) -> None:
        self.replace = replace

    def leave_FunctionDef(
        self, original_node: cst.FunctionDef, updated_node: cst.FunctionDef
    ) -> cst.FunctionDef:
        return self.replace.get(id(original_node), updated_node)


@dataclass
class _Chunk:
    start: int
    end: int
    module: cst.Module
    found: dict[str, list[cst.FunctionDef]]
    suffix: str  # appended to the source text before parsing: a sentinel statement
    alone: dict[int, str] = field(default_factory=dict)  # id of a def -> its code alone (``_spliced``)


class Located:
    """A source with the top-level statements holding some functions parsed by LibCST."""

    def __init__(self, source: str, file: str, qualnames: list[str]) -> None:
        self.bom = "\ufeff" if source.startswith("\ufeff") else ""  # a byte order mark is kept as it is
        source = source[len(self.bom) :]
        self.source = source
        self.file = file
        tree = parse_python(source, file)
        self.index: list[FunctionInfo] = index_tree(tree, file)
        starts = line_starts(source)
        bounds = [starts[_first_line(n) - 1] for n in tree.body]
        bounds.append(len(source))
        self.chunks: list[_Chunk] = []
        self._defs: dict[str, list[tuple[_Chunk, cst.FunctionDef]]] = {}
        chunk_of_line: dict[int, _Chunk] = {}
        for qualname in qualnames:
            infos = [i for i in self.index if i.qualname == qualname and not i.is_overload]
            if not infos:
                raise LmrError(self._not_found(qualname), file)
            for info in infos:
                top = self._top_level(tree.body, info.lineno)
                if top not in chunk_of_line:
                    chunk_of_line[top] = self._parse_chunk(bounds[top], bounds[top + 1])
            self._defs[qualname] = []
            for chunk in sorted(chunk_of_line.values(), key=lambda c: c.start):
                self._defs[qualname].extend((chunk, node) for node in chunk.found.get(qualname, []))
            if len(self._defs[qualname]) != len(infos):
                raise LmrError(f"LibCST and ast disagree about {qualname!r}", file)

    @staticmethod
    def _top_level(body: list[ast.stmt], lineno: int) -> int:
        for i, node in enumerate(body):
            if lineno <= (node.end_lineno or node.lineno):
                return i
        raise AssertionError(lineno)

    def _parse_chunk(self, start: int, end: int) -> _Chunk:
        # A statement at column 0 follows every top-level statement but the last: give the last one a
        # sentinel too, so that trailing comments are owned the same way everywhere (and LibCST, which
        # drops a blank line before an indented comment at the very end of a module, round-trips).
        text = self.source[start:end]
        newline = _NEWLINE.search(text)
        suffix = _SENTINEL if text.endswith(("\n", "\r")) else (newline[0] if newline else "\n") + _SENTINEL
        text += suffix
        try:
            module = cst.parse_module(text)
        except cst.ParserSyntaxError as exc:
            line = self.source.count("\n", 0, start) + exc.raw_line
            raise LmrError(f"LibCST cannot parse line {line}: {exc.message}", self.file) from None
        if module.code != text:
            line = self.source.count("\n", 0, start) + 1
            raise LmrError(f"LibCST does not reproduce the statement at line {line} exactly", self.file)
        collector = _Collector()
        module.visit(collector)
        chunk = _Chunk(start, end, module, collector.found, suffix)
        self.chunks.append(chunk)
        return chunk

    def _not_found(self, qualname: str) -> str:
        names = sorted({i.qualname for i in self.index})
        short = qualname.rpartition(".")[2]
        close = [n for n in names if n.rpartition(".")[2] == short]
        close += [n for n in difflib.get_close_matches(qualname, names, n=5, cutoff=0.6) if n not in close]
        if not names:
            return f"no function {qualname!r}: the file defines no functions"
        if all(i.is_overload for i in self.index if i.qualname == qualname) and qualname in names:
            return f"{qualname!r} has only typing.overload stubs, no implementation"
        hint = f"; did you mean {', '.join(repr(n) for n in close[:5])}?" if close else ""
        return f"no function {qualname!r}{hint}"

    def defs(self, qualname: str) -> list[cst.FunctionDef]:
        """The defs of ``qualname`` (overload stubs excluded), in source order."""
        return [node for _, node in self._defs[qualname]]

    def def_at(self, qualname: str, line: int) -> cst.FunctionDef:
        """The def of ``qualname`` whose first line (its first decorator's) is ``line``; LmrError naming the lines
        it is defined at when none starts there."""
        lines = [i.lineno for i in self.index if i.qualname == qualname and not i.is_overload]
        if line not in lines:
            at = ", ".join(str(n) for n in lines)
            raise LmrError(f"no definition of {qualname!r} starts at line {line} (it starts at line {at})", self.file)
        return self._defs[qualname][lines.index(line)][1]

    def redefined(self, qualname: str) -> bool:
        """Whether ``qualname`` is defined more than once, every time in the same block (a module's or a
        class's body, not if/else branches): Python keeps the last."""
        found = self._defs[qualname]
        method = "." in qualname
        if len(found) < 2 or (method and "." in qualname.partition(".")[2]):
            return False
        tops = [chunk.module.body[0] for chunk, _ in found]
        if not method:
            return all(top is node for top, (_, node) in zip(tops, found, strict=True))
        return all(top is tops[0] and isinstance(top, cst.ClassDef) and any(s is node for s in top.body.body)
                   for top, (_, node) in zip(tops, found, strict=True))

    def module_of(self, qualname: str, which: int = 0) -> cst.Module:
        """The LibCST module (one top-level statement) holding a def, for ``code_for_node``."""
        return self._defs[qualname][which][0].module

    def line_offset(self, qualname: str, which: int = 0) -> int:
        """Lines of the source before the module of :meth:`module_of` (add to its 1-based line numbers)."""
        chunk = self._defs[qualname][which][0]
        return len(line_starts(self.source[: chunk.start])) - 1

    def rebuild(self, replace: Mapping[int, cst.FunctionDef]) -> str:
        """The source with each def whose ``id`` is a key replaced; other chunks are copied as they are."""
        parts: list[str] = [self.bom]
        pos = 0
        mine: dict[int, list[cst.FunctionDef]] = {}
        for pairs in self._defs.values():
            for chunk, node in pairs:
                if id(node) in replace:
                    mine.setdefault(id(chunk), []).append(node)
        for chunk in sorted(self.chunks, key=lambda c: c.start):
            parts.append(self.source[pos : chunk.start])
            nodes = mine.get(id(chunk), [])
            if not nodes:  # a chunk's code is its text (checked when it was parsed)
                parts.append(self.source[chunk.start : chunk.end])
                pos = chunk.end
                continue
            code = _spliced(chunk, nodes[0], replace[id(nodes[0])]) if len(nodes) == 1 else None
            if code is None:
                code = chunk.module.visit(_Replacer(replace)).code
            if not code.endswith(chunk.suffix):
                raise AssertionError("the sentinel statement was lost")
            parts.append(code[: -len(chunk.suffix)])
            pos = chunk.end
        parts.append(self.source[pos:])
        return "".join(parts)


def _spliced(chunk: _Chunk, old: cst.FunctionDef, new: cst.FunctionDef) -> str | None:
    """The chunk's code with ``old`` (a top-level def, or a method of a top-level class) written as ``new``, by
    replacing the text where the two differ (from its first differing line to the def's end), or None where that
    text is not found exactly once: a def's code alone (in its class, with no other statement) is written as in
    the whole chunk, so one occurrence is the def's. Saves visiting the whole class per mutant."""
    top = chunk.module.body[0]
    if top is old:
        def alone(f: cst.FunctionDef) -> str:
            return chunk.module.code_for_node(f)
    elif isinstance(top, cst.ClassDef) and isinstance(top.body, cst.IndentedBlock) and any(
            s is old for s in top.body.body):
        def alone(f: cst.FunctionDef) -> str:
            return chunk.module.code_for_node(top.with_changes(body=top.body.with_changes(body=[f], footer=())))
    else:
        return None
    before = chunk.alone.get(id(old))
    if before is None:
        before = chunk.alone[id(old)] = alone(old)
    after = alone(new)
    same = before.rfind("\n", 0, len(os.path.commonprefix([before, after]))) + 1
    old_tail, new_tail = before[same:], after[same:]
    text = chunk.module.code
    if not old_tail.strip() or text.count(old_tail) != 1:
        return None
    return text.replace(old_tail, new_tail)


def pair_defs(
    target: Located, donor: Located, qualname: str
) -> list[tuple[cst.FunctionDef, cst.FunctionDef]]:
    """Pairs (target def, donor def) of one qualified name, in source order; LmrError when counts differ."""
    t_defs, d_defs = target.defs(qualname), donor.defs(qualname)
    if len(t_defs) != len(d_defs):
        raise LmrError(
            f"{qualname!r} is defined {len(t_defs)} time(s) in the target but {len(d_defs)} in {donor.file}",
            target.file,
        )
    return list(zip(t_defs, d_defs, strict=True))
