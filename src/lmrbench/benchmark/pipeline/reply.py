"""Turn a model's reply into a candidate goal file: find the code, take the goal functions, splice them in.

Code is read from fenced blocks (```python, ```py or a bare fence; an unclosed fence runs to the end), or
from the whole reply when it has no fence. Each goal function is taken from the first block that defines it,
as ``Class.method`` or, for a method, also as a bare ``def method`` then placed in its class. Only the
goal functions are spliced into the masked file. With ``allow_helpers`` the reply's other top-level imports,
functions and classes (except names the file already has) are kept by nesting them at the start of each goal
function's body: the goal functions stay the candidate's whole surface, so evaluation, which takes only them
from a candidate, keeps the helpers too.
"""

from __future__ import annotations

import ast
import re
import textwrap
from dataclasses import dataclass, field

from lmrbench import pyparse
from lmrbench.authoring.index import index_source
from lmrbench.authoring.splice import extract_function, replace_functions
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


def code_blocks(reply: str) -> list[str]:
    """The Python code blocks of a reply, in order; the whole reply when it has no fence."""
    blocks = [m.group(2) for m in _FENCE.finditer(reply) if m.group(1).lower() in _CODE_LANGS]
    return blocks or ([reply] if "```" not in reply else [])


def _parsed(blocks: list[str], names: set[str]) -> tuple[list[tuple[str, ast.Module]], list[str]]:
    """Blocks that parse, and the syntax errors of those that do not but seem to define a goal function."""
    good, bad = [], []
    for block in blocks:
        text = textwrap.dedent(block)
        try:
            good.append((text, pyparse.parse(text)))
        except (SyntaxError, ValueError) as exc:
            if any(re.search(rf"\bdef\s+{re.escape(n)}\b", text) for n in names):
                bad.append(f"line {getattr(exc, 'lineno', '?')}: {getattr(exc, 'msg', exc)}")
    return good, bad


def _find(blocks: list[tuple[str, ast.Module]], qualname: str) -> str | None:
    """The def text of ``qualname`` (placed in its class when it is a method given bare), or None."""
    cls, _, name = qualname.rpartition(".")
    for text, _tree in blocks:
        quals = {f.qualname for f in index_source(text, "<reply>") if not f.is_overload}
        if qualname in quals:
            found = extract_function(text, qualname, file="<reply>")
            return _wrap(cls, found) if cls else found
        if cls and name in quals:
            return _wrap(cls, extract_function(text, name, file="<reply>"))
    return None


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


def _helpers(blocks: list[tuple[str, ast.Module]], target: str, goal_names: set[str]) -> list[str]:
    """Top-level imports and definitions of the reply that the target lacks, as source texts."""
    tree = pyparse.parse(target)
    defined = {getattr(n, "name", None) for n in tree.body}
    have_imports = {ast.unparse(n) for n in tree.body if isinstance(n, ast.Import | ast.ImportFrom)}
    out: list[str] = []
    for text, mod in blocks:
        lines = text.splitlines(keepends=True)
        for node in mod.body:
            if isinstance(node, ast.Import | ast.ImportFrom):
                if ast.unparse(node) in have_imports:
                    continue
                have_imports.add(ast.unparse(node))
            elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                if node.name in goal_names or node.name in defined:
                    continue
                defined.add(node.name)
            else:
                continue
            decorators = getattr(node, "decorator_list", [])
            first = decorators[0].lineno if decorators else node.lineno
            out.append("".join(lines[first - 1 : node.end_lineno]).rstrip("\n") + "\n")
    return out


def _nest(piece: str, qualname: str, helpers: list[str]) -> str:
    """``piece`` (a def, maybe inside its class) with ``helpers`` placed at the start of the goal's body."""
    name = qualname.rpartition(".")[2]
    node = next(
        n
        for n in ast.walk(pyparse.parse(piece))
        if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef) and n.name == name
    )
    first = node.body[0]
    if first.lineno == node.lineno:
        raise ReplyProblem("parse_error", f"{qualname} is a one-line def; its helpers cannot be placed in it")
    is_doc = (
        isinstance(first, ast.Expr)
        and isinstance(first.value, ast.Constant)
        and isinstance(first.value.value, str)
    )
    at = (first.end_lineno or first.lineno) if is_doc else first.lineno - 1
    indent = " " * first.col_offset
    lines = piece.splitlines(keepends=True)
    block = "".join(textwrap.indent(h, indent) for h in helpers)
    return "".join(lines[:at]) + block + "".join(lines[at:])


def splice_reply(
    reply: str, masked: str, qualnames: list[str], *, file: str, allow_helpers: bool = False
) -> SplicedFile:
    """The masked goal file with the goal functions from ``reply``; ReplyProblem when there are none."""
    names = {q.rpartition(".")[2] for q in qualnames}
    blocks, bad = _parsed(code_blocks(reply), names)
    pieces: dict[str, str] = {}
    helpers = _helpers(blocks, masked, names | {q.split(".")[0] for q in qualnames}) if allow_helpers else []
    for qualname in qualnames:
        found = _find(blocks, qualname)
        if found is not None:
            pieces[qualname] = _nest(found, qualname, helpers) if helpers else found
    if not pieces:
        wanted = ", ".join(qualnames)
        if bad:
            raise ReplyProblem(
                "parse_error", f"the reply's code does not parse ({bad[0]}); no {wanted} found"
            )
        raise ReplyProblem("no_function", f"the reply defines none of {wanted}")
    missing = [q for q in qualnames if q not in pieces]
    if missing:
        raise ReplyProblem("no_function", f"the reply does not define {', '.join(missing)}")
    try:
        source = replace_functions(masked, _donor(pieces), qualnames, file=file, donor_file="<reply>")
    except LmrError as exc:
        raise ReplyProblem("parse_error", exc.problem) from None
    return SplicedFile(source=source, functions=list(pieces), helpers=[h.splitlines()[0] for h in helpers])
