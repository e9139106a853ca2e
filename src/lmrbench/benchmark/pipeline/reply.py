"""Turn a model's reply into a candidate goal file: find the code, take the goal functions, splice them in.

Code is read from fenced blocks (```python, ```py or a bare fence; an unclosed fence runs to the end), or
from the whole reply when it has no fence. The goal functions are taken from the last complete block (closed
and parsing) that defines them all (a draft first, then "the final version": the final one), else each from
the last block that defines it; a method may be given as ``Class.method`` or as a bare ``def method``, then
placed in its class. With them come the new imports, helpers, constants and types of the blocks taken
(``splice_candidate``), as for an agent's goal file.
"""

from __future__ import annotations

import ast
import re
import textwrap
from dataclasses import dataclass, field

from lmrbench import pyparse
from lmrbench.core.source.candidate_splice import SplicedCandidate, splice_candidate
from lmrbench.core.source.index import index_source
from lmrbench.core.source.splice import extract_function
from lmrbench.errors import LmrError

_FENCE = re.compile(r"^[ \t]*```[ \t]*([\w+-]*)[ \t]*\n(.*?)(?:^[ \t]*```[ \t]*$|\Z)", re.S | re.M)
_CODE_LANGS = {"", "python", "py", "python3"}


class ReplyProblem(LmrError):
    """The reply yields no candidate; ``status`` is no_function or parse_error."""

    def __init__(self, status: str, reason: str) -> None:
        super().__init__(reason)
        self.status = status
        self.reason = self.problem


@dataclass
class SplicedFile:
    """A goal file with the reply's functions in it."""

    source: str
    functions: list[str]
    helpers: list[str] = field(default_factory=list)
    """The statements kept beside the goal functions (``SplicedCandidate.kept``)."""
    blocks: list[int] = field(default_factory=list)
    """The code blocks the functions were taken from (1-based, in the reply's order)."""
    total_blocks: int = 0
    """Code blocks in the reply."""
    splice: SplicedCandidate | None = None
    """What the splice took, renamed and dropped."""


def fenced_blocks(reply: str) -> list[tuple[str, bool]]:
    """The Python code blocks of a reply, in order, each with whether its fence was closed; the whole reply
    (closed) when it has no fence."""
    blocks = [
        (m.group(2), m.end() > m.end(2))
        for m in _FENCE.finditer(reply)
        if m.group(1).lower() in _CODE_LANGS
    ]
    return blocks or ([(reply, True)] if "```" not in reply else [])


@dataclass
class _Block:
    number: int
    text: str
    tree: ast.Module
    closed: bool
    quals: set[str]


def _parsed(blocks: list[tuple[str, bool]], names: set[str]) -> tuple[list[_Block], list[str]]:
    """Blocks that parse, and the syntax errors of those that do not but seem to define a goal function."""
    good, bad = [], []
    for number, (block, closed) in enumerate(blocks, 1):
        text = textwrap.dedent(block)
        try:
            tree = pyparse.parse(text)
        except (SyntaxError, ValueError) as exc:
            if any(re.search(rf"\bdef\s+{re.escape(n)}\b", text) for n in names):
                bad.append(f"line {getattr(exc, 'lineno', '?')}: {getattr(exc, 'msg', exc)}")
            continue
        quals = {f.qualname for f in index_source(text, "<reply>") if not f.is_overload}
        good.append(_Block(number, text, tree, closed, quals))
    return good, bad


def _defines(block: _Block, qualname: str) -> bool:
    cls, _, name = qualname.rpartition(".")
    return qualname in block.quals or bool(cls and name in block.quals)


def _choose(blocks: list[_Block], qualnames: list[str]) -> dict[str, _Block]:
    """The block each goal function is taken from: the last complete one defining them all, else per function
    the last complete block defining it (an unclosed one only when no closed one does)."""
    ranked = [b for b in blocks if b.closed] + [b for b in blocks if not b.closed]  # closed ones win
    for block in reversed([b for b in blocks if b.closed]):
        if all(_defines(block, q) for q in qualnames):
            return dict.fromkeys(qualnames, block)
    chosen: dict[str, _Block] = {}
    for q in qualnames:
        found = [b for b in ranked if _defines(b, q)]
        closed = [b for b in found if b.closed]
        if found:
            chosen[q] = (closed or found)[-1]
    return chosen


def _take(block: _Block, qualname: str) -> str:
    """The def text of ``qualname`` from its block (placed in its class when it is a method given bare)."""
    cls, _, name = qualname.rpartition(".")
    if qualname in block.quals:
        found = extract_function(block.text, qualname, file="<reply>")
        return _wrap(cls, found) if cls else found
    return _wrap(cls, extract_function(block.text, name, file="<reply>"))


def _others(block: _Block, skip: set[str]) -> str:
    """The block's top-level statements other than the goal functions and their classes."""
    lines = block.text.splitlines(keepends=True)
    out = []
    for node in block.tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) and node.name in skip:
            continue
        decorators = getattr(node, "decorator_list", None) or []
        first = decorators[0].lineno if decorators else node.lineno
        out.append("".join(lines[first - 1 : node.end_lineno]).rstrip("\n") + "\n")
    return "".join(out)


def _wrap(cls_path: str, def_text: str) -> str:
    out = def_text
    for depth, part in enumerate(reversed(cls_path.split("."))):
        del depth
        out = f"class {part}:\n" + textwrap.indent(out, "    ")
    return out


def _donor(pieces: dict[str, str]) -> str:
    """One donor source: methods of the same class grouped in one class statement."""
    by_class: dict[str, list[str]] = {}
    plain: list[str] = []
    for qualname, text in pieces.items():
        cls = qualname.rpartition(".")[0]
        if cls:
            by_class.setdefault(cls, []).append(text)
        else:
            plain.append(text)
    parts = list(plain)
    for cls, texts in by_class.items():
        bodies = []
        for text in texts:  # strip the wrapping class lines again, keep the indented def
            lines = text.splitlines(keepends=True)
            depth = cls.count(".") + 1
            bodies.append("".join(lines[depth:]))
        head = "".join("    " * i + f"class {part}:\n" for i, part in enumerate(cls.split(".")))
        parts.append(head + "\n".join(bodies))
    return "\n\n".join(p.rstrip("\n") + "\n" for p in parts)


def splice_reply(reply: str, masked: str, qualnames: list[str], *, file: str) -> SplicedFile:
    """The masked goal file with the goal functions from ``reply`` and what they need from the blocks taken
    (``splice_candidate``); ReplyProblem when there are none."""
    names = {q.rpartition(".")[2] for q in qualnames}
    every = fenced_blocks(reply)
    blocks, bad = _parsed(every, names)
    chosen = _choose(blocks, qualnames)
    if not chosen:
        wanted = ", ".join(qualnames)
        if bad:
            raise ReplyProblem(
                "parse_error", f"the reply's code does not parse ({bad[0]}); no {wanted} found"
            )
        raise ReplyProblem("no_function", f"the reply defines none of {wanted}")
    missing = [q for q in qualnames if q not in chosen]
    if missing:
        raise ReplyProblem("no_function", f"the reply does not define {', '.join(missing)}")
    pieces = {q: _take(b, q) for q, b in chosen.items()}
    skip = names | {q.split(".")[0] for q in qualnames}
    taken = sorted({b.number: b for b in chosen.values()}.items())
    donor = "".join(_others(b, skip) for _, b in taken) + "\n" + _donor(pieces)
    try:
        spliced = splice_candidate(masked, donor, qualnames, file=file, donor_file="<reply>")
    except LmrError as exc:
        raise ReplyProblem("parse_error", exc.problem) from None
    return SplicedFile(source=spliced.source, functions=list(pieces), helpers=spliced.kept,
                       blocks=[n for n, _ in taken], total_blocks=len(every), splice=spliced)  # fmt: skip
