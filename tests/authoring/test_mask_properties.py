"""Property tests over generated Python sources: masking then splicing the golden body back is the identity,
and neither masking nor a mutant changes anything outside the function's body."""

from __future__ import annotations

import ast
import io
import itertools
import tokenize
from dataclasses import dataclass, field

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lmrbench.authoring.mutants.mutants import MAX_MUTANTS, generate_mutants
from lmrbench.authoring.task.mask import MaskStyle, mask_source
from lmrbench.core.source.index import index_source
from lmrbench.core.source.splice import splice_bodies

TEXT = st.text(alphabet="abcé✓ü漢 _-", min_size=0, max_size=8)


@dataclass
class Func:
    is_async: bool
    decorators: list[str]
    docstring: str | None
    one_line: bool
    header_comment: str | None
    body: list
    kind: str = "plain"  # plain | property | overload


@dataclass
class Class:
    body: list = field(default_factory=list)


@dataclass
class If:
    body: list


@dataclass
class Line:
    """A comment (at a relative indentation, may be negative), a blank line or a simple statement."""

    kind: str
    text: str = ""
    shift: int = 0


DOCSTRINGS = st.one_of(
    st.none(),
    TEXT.map(lambda t: f'"""{t}."""'),
    TEXT.map(lambda t: f"'''Doc {t}\n\n    more.'''"),
    TEXT.map(lambda t: f"r'{t}'"),
)
SIMPLE = st.one_of(
    TEXT.map(lambda t: f"value = {t!r}"),
    st.just("return x"),
    st.just("total = (x +\n        1)"),
    st.just("a = 1; b = 2"),
    TEXT.map(lambda t: f"call(x, {t!r})  # why {t}"),
)
LINES = st.one_of(
    st.builds(Line, st.just("comment"), TEXT, st.integers(-2, 1)),
    st.builds(Line, st.just("blank")),
    st.builds(Line, st.just("simple"), SIMPLE),
)
DECORATORS = st.lists(st.sampled_from(["deco", "functools.wraps(x)", "a.b.c", "deco(1, 'é')"]), max_size=2)


def statements(children: st.SearchStrategy) -> st.SearchStrategy:
    func = st.builds(
        Func,
        st.booleans(),
        DECORATORS,
        DOCSTRINGS,
        st.booleans(),
        st.one_of(st.none(), TEXT),
        st.lists(st.one_of(LINES, children), max_size=5),
        st.sampled_from(["plain", "plain", "plain", "property", "overload"]),
    )
    cls = st.builds(Class, st.lists(st.one_of(LINES, children), max_size=5))
    block = st.builds(If, st.lists(st.one_of(LINES, children), max_size=3))
    return st.one_of(func, cls, block)


TREES = st.lists(st.one_of(LINES, st.recursive(statements(LINES), statements, max_leaves=8)), max_size=6)


class Renderer:
    def __init__(self, unit: str) -> None:
        self.unit = unit
        self.names = itertools.count()
        self.lines: list[str] = []

    def emit(self, depth: int, text: str) -> None:
        for i, part in enumerate(text.split("\n")):
            self.lines.append((self.unit * depth if i == 0 else "") + part)

    def body(self, items: list, depth: int, in_class: bool) -> None:
        has_statement = False
        for item in items:
            has_statement |= self.item(item, depth, in_class)
        if not has_statement:
            self.emit(depth, "pass")

    def item(self, item, depth: int, in_class: bool) -> bool:
        """Render one element; True when it is a statement (not a comment or a blank line)."""
        if isinstance(item, Line):
            if item.kind == "blank":
                self.lines.append("")
            elif item.kind == "comment":
                self.emit(max(0, depth + item.shift), f"# {item.text}")
            else:
                text = "pass" if item.text == "return x" and in_class else item.text
                self.emit(depth, text)
            return item.kind == "simple"
        if isinstance(item, If):
            self.emit(depth, "if x:")
            self.body(item.body, depth + 1, in_class)
            return True
        if isinstance(item, Class):
            self.emit(depth, f"class C{next(self.names)}:")
            self.body(item.body, depth + 1, True)
            return True
        self.func(item, depth, in_class)
        return True

    def func(self, f: Func, depth: int, in_class: bool) -> None:
        name = f"f{next(self.names)}"
        params = "self, x" if in_class else "x"
        kw = "async def" if f.is_async else "def"
        if f.kind == "overload":
            for annotation in ("int", "str"):
                self.emit(depth, "@typing.overload")
                self.emit(depth, f"{kw} {name}({params}: {annotation}) -> {annotation}: ...")
        decorators = ["property"] if f.kind == "property" and in_class else f.decorators
        for deco in decorators:
            self.emit(depth, f"@{deco}")
        comment = f"  # {f.header_comment}" if f.header_comment is not None else ""
        if f.one_line:
            doc = f"{f.docstring}; " if f.docstring and "\n" not in f.docstring else ""
            self.emit(depth, f"{kw} {name}({params}): {doc}return x{comment}")
        else:
            self.emit(depth, f"{kw} {name}({params}):{comment}")
            if f.docstring:
                self.emit(depth + 1, f.docstring)
            self.body(f.body, depth + 1, False)
        if f.kind == "property" and in_class:
            self.emit(depth, f"@{name}.setter")
            self.emit(depth, f"def {name}(self, value):")
            self.emit(depth + 1, "self._value = value")


@st.composite
def sources(draw) -> str:
    renderer = Renderer(draw(st.sampled_from(["    ", "  ", "\t"])))
    renderer.emit(0, "import functools\nimport typing")
    renderer.body(draw(TREES), 0, False)
    newline = draw(st.sampled_from(["\n", "\r\n"]))
    text = newline.join(renderer.lines)
    return text + newline if draw(st.booleans()) else text


def offset(source: str, starts: list[int], line: int, byte_col: int) -> int:
    """Character offset of an ast position (columns of ast are UTF-8 byte offsets)."""
    line_text = source[starts[line - 1] : starts[line]]
    return starts[line - 1] + len(line_text.encode("utf-8")[:byte_col].decode("utf-8"))


def line_starts(source: str) -> list[int]:
    starts = [0]
    for line in io.StringIO(source, newline="").readlines():
        starts.append(starts[-1] + len(line))
    return starts


def body_span(source: str, node: ast.FunctionDef | ast.AsyncFunctionDef) -> tuple[int, int]:
    """Where masking may change the source: from the docstring's end (or the def's colon) to the body's end,
    comments indented inside the body after its last statement included."""
    starts = line_starts(source)
    first = node.body[0]
    if isinstance(first, ast.Expr) and isinstance(getattr(first.value, "value", None), str):
        start = offset(source, starts, first.end_lineno, first.end_col_offset)
    else:  # the def's colon: the first ':' at bracket depth 0 after 'def'
        tokens = tokenize.generate_tokens(io.StringIO(source[starts[node.lineno - 1] :], newline="").readline)
        depth = 0
        for tok in tokens:
            if tok.type == tokenize.OP and tok.string in "([{":
                depth += 1
            elif tok.type == tokenize.OP and tok.string in ")]}":
                depth -= 1
            elif tok.type == tokenize.OP and tok.string == ":" and depth == 0:
                line, col = tok.end
                start = starts[node.lineno - 1 + line - 1] + col
                break
    lines = source[starts[node.end_lineno] :].splitlines()  # only \n and \r\n here: safe
    last = node.end_lineno
    last_line = source[starts[node.body[-1].lineno - 1] : starts[node.body[-1].lineno]]
    body_indent = len(last_line) - len(last_line.lstrip())
    for i, text in enumerate(lines):
        stripped = text.strip()
        if stripped and not stripped.startswith("#"):
            break
        if stripped and len(text) - len(text.lstrip()) >= body_indent:
            last = node.end_lineno + i + 1
    return start, starts[last]


def function_nodes(tree: ast.Module) -> dict[int, ast.FunctionDef | ast.AsyncFunctionDef]:
    """Function nodes by first line (decorators included)."""
    return {
        (n.decorator_list[0].lineno if n.decorator_list else n.lineno): n
        for n in ast.walk(tree)
        if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)
    }


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sources(), st.sampled_from(list(MaskStyle)))
def test_mask_then_splice_is_the_identity_and_only_the_body_changes(source, style):
    tree = ast.parse(source)
    nodes = function_nodes(tree)
    for info in index_source(source, "gen.py"):
        if info.is_overload:
            continue
        masked = mask_source(source, [info.qualname], style, file="gen.py")
        ast.parse(masked)
        assert splice_bodies(masked, source, [info.qualname], file="gen.py") == source
        start, end = body_span(source, nodes[info.lineno])
        tail = len(source) - end
        assert masked[:start] == source[:start]
        assert masked[len(masked) - tail :] == source[end:]
        stub = "pass" if style is MaskStyle.PASS else "raise NotImplementedError"
        assert stub in masked[start : len(masked) - tail]


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sources())
def test_masking_every_function_at_once_is_undone_by_one_splice(source):
    names = sorted({i.qualname for i in index_source(source, "gen.py") if not i.is_overload})
    if not names:
        return
    masked = mask_source(source, names, file="gen.py")
    ast.parse(masked)
    assert splice_bodies(masked, source, names, file="gen.py") == source


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sources())
def test_mutants_parse_differ_and_change_only_the_body(source):
    nodes = function_nodes(ast.parse(source))
    for info in index_source(source, "gen.py"):
        if info.is_overload:
            continue
        start, end = body_span(source, nodes[info.lineno])
        mutants = generate_mutants(source, info.qualname, file="gen.py")
        assert 2 <= len(mutants) <= MAX_MUTANTS
        assert len({mu.source for mu in mutants}) == len(mutants)
        for mu in mutants:
            assert mu.source != source
            ast.parse(mu.source)
            tail = len(source) - end
            assert mu.source[:start] == source[:start]
            assert mu.source[len(mu.source) - tail :] == source[end:]
