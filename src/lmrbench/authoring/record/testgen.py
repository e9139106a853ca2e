"""Write ``unit_test/unit_test_<k>.py``: plain pytest, one test per recorded case, or a scaffold to fill in.

A generated file starts with a header line holding a hash of the rest of the file (``generated_file``), so a
file changed by hand is recognised and never replaced without ``--force``.
"""

from __future__ import annotations

import ast
import re
import textwrap
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from lmrbench import pyparse
from lmrbench.authoring.record.amplify import varying_guidance
from lmrbench.authoring.record.generated_file import stamp
from lmrbench.authoring.record.script_mode import with_script_block
from lmrbench.errors import LmrError
from lmrbench.schemas.task_info import CheckerSettings

TODO_MARK = "LMRBENCH-TODO"
"""Marks a value of a scaffold still to be written; validation refuses a test file that holds it."""
CHECKER_KINDS = ("exact", "numeric", "unordered", "text")
"""The checker kinds of CheckerSettings.kind."""
@dataclass(frozen=True)
class GoalImport:
    """How a test imports the goal file: the module name and the folder (repo-relative) it is found from."""

    module: str
    root: str = ""


def goal_import(repo_dir: Path, goal_file: str) -> GoalImport:
    """The import of ``goal_file``: packages (folders with ``__init__.py``) give a dotted name."""
    path = PurePosixPath(goal_file)
    folder = path.parent
    names = [] if path.stem == "__init__" else [path.stem]
    while folder.parts and (repo_dir / folder / "__init__.py").is_file():
        names.insert(0, folder.name)
        folder = folder.parent
    bad = [n for n in names if not n.isidentifier()]
    if bad:
        raise LmrError(
            f"{goal_file} cannot be imported: {bad[0]!r} is not a module name", repo_dir / goal_file
        )
    root = "" if str(folder) == "." else folder.as_posix()
    return GoalImport(".".join(names), root)


@dataclass(frozen=True)
class CaseSpec:
    """What a generated test needs to know about one recorded case."""

    test: str
    file: str
    qualname: str
    binding: str
    goal: GoalImport
    positional: bool
    arguments: dict[str, str]
    returns: str
    changed: list[str] = field(default_factory=list)
    state_changed: bool = False
    random_state: bool = False
    held: bool = False
    """The call changed arrays in place inside the containers of its arguments or ``self``."""
    untouched: bool = False
    """The call left as they were arguments that a call can change in place (arrays, lists...)."""
    own_copies: bool = False
    """A method given arrays: the test checks that ``self`` shares no more memory with them than the reference's
    did (``Case.check_own_copies``)."""
    raises: str = ""
    """The builtin exception the reference code raised on this call ('' when it returned)."""


def snake_name(name: str) -> str:
    text = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1_\2", name))
    return text.lower() or "obj"


def _tolerance_args(checker: CheckerSettings, scale: str | None) -> str:
    """The tolerance arguments of a checker call: the file's RTOL/ATOL, or the inputs' scale by dtype."""
    if checker.tolerance == "explicit":
        return ", rtol=RTOL, atol=ATOL"
    return f", scale={scale}" if scale else ""


def _checker_call(checker: CheckerSettings, actual: str, expected: str, scale: str | None = "case.scale") -> str:
    tol = _tolerance_args(checker, scale)
    if checker.kind == "exact":
        return f"assert_equal({actual}, {expected})"
    if checker.kind == "unordered":
        return f"assert_unordered({actual}, {expected}{tol})"
    if checker.kind == "text":
        return f"assert_similar_text({actual}, {expected}, threshold=THRESHOLD{tol})"
    return f"assert_close({actual}, {expected}{tol})"


def _side_check(checker: CheckerSettings, actual: str, expected: str, where: str) -> str:
    if checker.kind == "exact":
        return f'assert_equal({actual}, {expected}, where="{where}")'
    return f'assert_close({actual}, {expected}{_tolerance_args(checker, "case.scale")}, where="{where}")'


def _tolerance_text(checker: CheckerSettings) -> str:
    if checker.kind == "exact":
        return "exactly"
    text = (f"within rtol={checker.rtol:g}, atol={checker.atol:g}" if checker.tolerance == "explicit" else
            "within a tolerance that follows each value's dtype and the inputs' magnitude (float32: rtol 3e-5, "
            "float16 4e-3, bfloat16 1.6e-2, float64 1e-5; see lmrbench_precision.py)")
    if checker.kind == "unordered":
        return f"in any order, numbers {text}"
    if checker.kind == "text":
        return f"with text at least {checker.text_threshold:g} similar, numbers {text}"
    return text


def _constants(checker: CheckerSettings) -> list[str]:
    if checker.kind == "exact":
        return []
    lines = [f"RTOL = {checker.rtol!r}", f"ATOL = {checker.atol!r}"] if checker.tolerance == "explicit" else []
    if checker.kind == "text":
        lines.append(f"THRESHOLD = {checker.text_threshold!r}")
    return lines


def _checker_names(checker: CheckerSettings, side: bool, raises: bool = False, untouched: bool = False) -> list[str]:
    main = {"exact": "assert_equal", "unordered": "assert_unordered", "text": "assert_similar_text"}
    names = {main.get(checker.kind, "assert_close")}
    if side:
        names.add("assert_equal" if checker.kind == "exact" else "assert_close")
    if raises:
        names.add("assert_raises")
    if untouched:
        names.add("assert_equal")
    return sorted(names)


def _path_lines(goals: list[GoalImport]) -> list[str]:
    roots = sorted({g.root for g in goals if g.root})
    entries = ["str(HERE)", "str(REPO)"] + [f"str(REPO / {r!r})" for r in roots]
    return [
        "HERE = Path(__file__).resolve().parent",
        "REPO = HERE.parent",
        f"sys.path[:0] = [{', '.join(entries)}]",
    ]


def _imports(cases: list[CaseSpec], factory: str | None) -> list[str]:
    by_module: dict[str, set[str]] = {}
    for c in cases:
        by_module.setdefault(c.goal.module, set()).add(c.qualname.split(".")[0])
    lines = [f"from {m} import {', '.join(sorted(n))}  # noqa: E402" for m, n in sorted(by_module.items())]
    if factory:
        module, _, name = factory.partition(":")
        lines.append(f"from {module} import {name}  # noqa: E402")
    return lines


def _docstring_line(case: CaseSpec) -> str:
    shown = {k: v for k, v in case.arguments.items() if k != "self"}
    args = ", ".join(f"{k}={v}" for k, v in shown.items()) or "no arguments"
    notes = []
    if case.binding == "method":
        notes.append(f"on an instance with {case.arguments.get('self', 'its recorded attributes')}")
    if case.random_state:
        notes.append("draws random numbers")
    outcome = f"raises {case.raises}" if case.raises else case.returns
    text = f"{args} -> {outcome}" + (f" ({'; '.join(notes)})" if notes else "")
    return text.replace('"""', "'''").replace("\\", "\\\\")


def _test_function(case: CaseSpec, data_var: str, checker: CheckerSettings, factory: str | None) -> list[str]:
    owner, _, method = case.qualname.rpartition(".")
    call_args = "*case.args, **case.kwargs" if case.positional else "**case.kwargs"
    doc = textwrap.wrap(_docstring_line(case), width=100, subsequent_indent="    ")
    lines = [f"def {case.test}():", f'    """{doc[0]}' + ("" if len(doc) > 1 else '"""')]
    if len(doc) > 1:
        lines += doc[1:] + ['    """']
    lines.append(f'    case = load_case({data_var} / "{case.file}")')
    if case.binding == "method":
        obj = snake_name(owner.split(".")[-1])
        builder = f"{owner}, factory={factory.partition(':')[2]}" if factory else owner
        lines.append(f"    {obj} = case.instance({builder})")
        callee = f"{obj}.{method}"
    else:
        callee = case.qualname
    if case.random_state:
        lines.append("    case.restore_random_state()")
    if case.raises:
        return [*lines, "    with assert_raises(case.raises):", f"        {callee}({call_args})"]
    lines.append(f"    result = {callee}({call_args})")
    lines.append(f"    {_checker_call(checker, 'result', 'case.expected')}")
    for name in case.changed:
        lines.append(
            f"    {_side_check(checker, f'case.argument({name!r})', f'case.changed[{name!r}]', name)}"
        )
    if case.state_changed:
        obj = snake_name(owner.split(".")[-1])
        lines.append(f"    {_side_check(checker, f'case.attributes_of({obj})', 'case.state_after', 'self')}")
    if case.held:
        lines.append(f"    {_side_check(checker, 'case.held', 'case.held_after', 'arrays changed in place')}")
    if case.untouched:  # exactly: the reference code did not write into them
        lines.append('    assert_equal(case.untouched(), case.untouched_as_recorded(), '
                     'where="arguments the reference code left as they were")')
    if case.own_copies and case.binding == "method":  # state that aliases the caller's arrays
        lines.append(f"    case.check_own_copies({snake_name(owner.split('.')[-1])})")
    return lines


def render_recorded_test(
    impl_index: int,
    cases: list[CaseSpec],
    checker: CheckerSettings,
    command: str,
    factory: str | None = None,
    *,
    checker_note: str = "",
    notes: list[str] | None = None,
) -> str:
    """The whole test file (with its header) for the recorded ``cases`` of one implementation; the header
    names the checker and, with ``checker_note``, why it was chosen, and says which cases were added by varying
    a parameter (``notes``)."""
    names = sorted({c.qualname for c in cases})
    files = sorted({c.goal.module for c in cases})
    what = ", ".join(f"`{n}`" for n in names)
    side = any(c.changed or c.state_changed or c.held for c in cases)
    doc = (
        f"Tests of {what} ({', '.join(files)}), implementation {impl_index}.\n\n"
        f"Each case was recorded from a real call while {_command_text(command, impl_index)} ran the "
        "reference code: the arguments of the call and what it returned (and changed) are in the case file, "
        f"and the function must give the same results {_tolerance_text(checker)}.\n\n"
        f"Checker: {checker.kind}" + (f" ({checker_note})" if checker_note else "")
        + '; set "checker" of the implementation in info.json and record again to change it.'
    )
    if notes:
        doc += ("\n\nCases added to the recorded ones (a recorded call with one parameter varied, the reference "
                "code giving the expected values): " + "; ".join(notes) + ".")
    body = _file_head(doc, [c.goal for c in cases], _checker_names(checker, side, any(c.raises for c in cases),
                                                                     any(c.untouched and not c.raises for c in cases)))
    body.append("from lmrbench_values import load_case  # noqa: E402")
    body += _imports(cases, factory) + [""]
    body.append(f'DATA = HERE / "data" / "impl_{impl_index}"')
    body += _constants(checker)
    for case in cases:
        body += ["", ""] + _test_function(case, "DATA", checker, factory)
    return stamp(with_script_block("\n".join(body) + "\n"))


def _file_head(doc: str, goals: list[GoalImport], checkers: list[str]) -> list[str]:
    """The start of a generated test file: its docstring, the path lines that make the goal modules importable,
    and the import of the checkers it calls."""
    return ['"""' + "\n".join(_wrap_paragraphs(doc)) + '\n"""', "", "import sys", "from pathlib import Path", "",
            *_path_lines(goals), "", f"from lmrbench_checkers import {', '.join(checkers)}  # noqa: E402"]


def _command_text(command: str, impl_index: int) -> str:
    if "\n" in command.strip() or len(command) > 80:
        return f"the command kept in data/impl_{impl_index}/index.json"
    return f"`{command.strip()}`"


def _wrap_paragraphs(text: str) -> list[str]:
    out: list[str] = []
    for i, para in enumerate(text.split("\n\n")):
        if i:
            out.append("")
        out += textwrap.wrap(para, width=110) or [""]
    return out


# ---------------------------------------------------------------------------------------------- scaffolds


@dataclass(frozen=True)
class Signature:
    """A goal function's parameters as written in its source."""

    qualname: str
    params: list[tuple[str, str, str | None]]
    """(name, kind, default source or None); kind is positional_only, positional_or_keyword, var_positional,
    keyword_only or var_keyword."""
    binding: str


def read_signature(source: str, qualname: str, file: str) -> Signature:
    """The parameters of ``qualname`` in ``source`` (LmrError naming the file when it is not there)."""
    try:
        tree = pyparse.parse(source)
    except SyntaxError as exc:
        raise LmrError(f"syntax error at line {exc.lineno}: {exc.msg}", file) from None
    parts = qualname.split(".")
    scope: list[ast.stmt] = tree.body
    node: ast.AST | None = None
    for i, part in enumerate(parts):
        want = (ast.FunctionDef, ast.AsyncFunctionDef) if i == len(parts) - 1 else (ast.ClassDef,)
        node = next((n for n in scope if isinstance(n, want) and n.name == part), None)
        if node is None:
            raise LmrError(f"no function {qualname} here", file)
        scope = node.body  # type: ignore[attr-defined]
    assert isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
    decorators = {ast.unparse(d) for d in node.decorator_list}
    binding = "function"
    if len(parts) > 1:
        binding = (
            "staticmethod"
            if "staticmethod" in decorators
            else "classmethod"
            if "classmethod" in decorators
            else "method"
        )
    a = node.args
    params: list[tuple[str, str, str | None]] = []
    positional = a.posonlyargs + a.args
    defaults = [None] * (len(positional) - len(a.defaults)) + [ast.unparse(d) for d in a.defaults]
    for i, (arg, default) in enumerate(zip(positional, defaults, strict=True)):
        kind = "positional_only" if i < len(a.posonlyargs) else "positional_or_keyword"
        params.append((arg.arg, kind, default))
    if a.vararg:
        params.append((a.vararg.arg, "var_positional", None))
    for arg, d in zip(a.kwonlyargs, a.kw_defaults, strict=True):
        params.append((arg.arg, "keyword_only", None if d is None else ast.unparse(d)))
    if a.kwarg:
        params.append((a.kwarg.arg, "var_keyword", None))
    if binding in ("method", "classmethod") and params:
        params = params[1:]
    return Signature(qualname, params, binding)


def render_scaffold(
    impl_index: int, signatures: list[tuple[Signature, GoalImport]], checker: CheckerSettings, cases: int = 3
) -> str:
    """A test file with the call shapes written out and every value to fill marked ``LMRBENCH-TODO``."""
    names = ", ".join(f"`{s.qualname}`" for s, _ in signatures)
    doc = (
        f"Tests of {names}, implementation {impl_index}, written by hand.\n\n"
        f"Replace every {TODO_MARK} with the inputs of a real call and the value the reference code returns "
        f"for them; the function must give the same results {_tolerance_text(checker)}. `lmrbench validate` "
        f"refuses this file while it holds {TODO_MARK}."
    )
    doc += "\n\n" + varying_guidance([n for sig, _ in signatures for n, kind, _ in sig.params
                                       if kind not in ("var_positional", "var_keyword")])
    body = _file_head(doc, [g for _, g in signatures], _checker_names(checker, False))
    by_module: dict[str, set[str]] = {}
    for sig, goal in signatures:
        by_module.setdefault(goal.module, set()).add(sig.qualname.split(".")[0])
    body += [f"from {m} import {', '.join(sorted(n))}  # noqa: E402" for m, n in sorted(by_module.items())]
    body += [""] + (_constants(checker) or [])
    many = len(signatures) > 1
    for sig, _ in signatures:
        for n in range(1, cases + 1):
            test = f"test_{snake_name(sig.qualname.replace('.', '_'))}_case_{n}" if many else f"test_case_{n}"
            body += ["", ""] + _scaffold_function(test, sig, checker)
    return stamp("\n".join(body) + "\n")


def _scaffold_function(test: str, sig: Signature, checker: CheckerSettings) -> list[str]:
    lines = [f"def {test}():"]
    call: list[str] = []
    for name, kind, default in sig.params:
        value = "..." if default is None else default
        note = "" if default is None else " (the default)"
        if kind == "var_positional":
            lines.append(f"    {name} = ()  # {TODO_MARK}: extra positional arguments, if any")
            call.append(f"*{name}")
        elif kind == "var_keyword":
            lines.append(f"    {name} = {{}}  # {TODO_MARK}: extra keyword arguments, if any")
            call.append(f"**{name}")
        else:
            lines.append(f"    {name} = {value}  # {TODO_MARK}{note}")
            call.append(name if kind == "positional_only" else f"{name}={name}")
    lines.append(f"    expected = ...  # {TODO_MARK}: what the reference code returns for these inputs")
    owner, _, method = sig.qualname.rpartition(".")
    if sig.binding == "method":
        obj = snake_name(owner.split(".")[-1])
        lines.append(f"    {obj} = {owner}(...)  # {TODO_MARK}: build the object the method is called on")
        callee = f"{obj}.{method}"
    else:
        callee = sig.qualname
    lines.append(f"    result = {callee}({', '.join(call)})")
    lines.append(f"    {_checker_call(checker, 'result', 'expected', scale=None)}")
    return lines
