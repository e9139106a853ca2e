"""Tests that pass whatever the candidate does, or that cannot run here (T306-T311), read statically.

- T306: a value is compared with itself (``allclose(x[i], x[i])``);
- T307: a tautology: an assertion of a constant, a pass flag that stays true once one case passed, expected and
  computed values read from the same file;
- T308: an assertion failure is caught and neither raised again nor logged as a failure (the test reports
  success either way);
- T309: random numbers drawn with no seed anywhere in the file (cases differ from run to run);
- T310: the test needs a GPU (``.cuda()``, device ``"cuda"``, or a name set to it, with no CPU fallback);
- T311: the test downloads a model or data set from the Hugging Face Hub (no network while tests run).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator

from lmrbench.authoring.check.findings import Finding
from lmrbench.core.taskset import Task
from lmrbench.core.testfiles import UnitTestFile, call_name, dotted_name, read_unit_tests
from lmrbench.schemas.task_info import Implementation

_COMPARE_FUNCS = re.compile(r"^(assert\w*(Equal|Close|close|equal)\w*|allclose|isclose|array_equal|equal|"
                            r"assert_allclose|assert_close)$")
_RANDOM_MODULES = frozenset({"random", "np.random", "numpy.random", "torch"})
_RANDOM_CALLS = frozenset({"random", "randint", "randrange", "choice", "choices", "sample", "shuffle", "uniform",
                           "gauss", "normal", "rand", "randn", "permutation", "randperm", "randn_like",
                           "rand_like", "randint_like", "normal_", "uniform_", "bernoulli", "multinomial"})
_SEED_CALLS = frozenset({"seed", "manual_seed", "manual_seed_all", "set_seed", "seed_everything",
                         "set_random_seed", "RandomState", "default_rng", "Generator", "PRNGKey"})
_HUB_CALLS = frozenset({"from_pretrained", "hf_hub_download", "snapshot_download", "load_dataset",
                        "SentenceTransformer", "create_model"})
_BUILTIN_LOADERS = frozenset({"json", "csv", "text", "parquet", "arrow", "imagefolder", "audiofolder", "pandas"})
_HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*(/[\w.-]+)?$")


def _same(a: ast.AST, b: ast.AST) -> bool:
    return not isinstance(a, ast.Constant) and ast.dump(a) == ast.dump(b)


def self_comparisons(tree: ast.Module) -> Iterator[int]:
    """Lines where a value is compared with itself."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], ast.Eq | ast.Is):
            pair: tuple[ast.AST, ast.AST] = (node.left, node.comparators[0])
        elif isinstance(node, ast.Call) and _COMPARE_FUNCS.match(call_name(node)) and len(node.args) >= 2:
            pair = (node.args[0], node.args[1])
        else:
            continue
        if _same(*pair):
            yield node.lineno


def _always_true(expr: ast.expr) -> bool:
    if isinstance(expr, ast.Constant):
        return bool(expr.value) and expr.value is not Ellipsis
    if isinstance(expr, ast.Tuple | ast.List):
        return bool(expr.elts)
    if isinstance(expr, ast.BoolOp) and isinstance(expr.op, ast.Or):
        return any(_always_true(v) for v in expr.values)
    return False


def _constant_assertions(tree: ast.Module) -> Iterator[tuple[int, str]]:
    for node in ast.walk(tree):
        if isinstance(node, ast.Assert):
            value: ast.expr = node.test
        elif isinstance(node, ast.Call) and call_name(node) in ("assertTrue", "assert_") and node.args:
            value = node.args[0]
        else:
            continue
        if _always_true(value):
            yield node.lineno, "asserts a value that is always true"


def _accumulated_flags(tree: ast.Module) -> Iterator[tuple[int, str]]:
    """A loop that adds each case's outcome to a total and reports success when the total is true."""
    for loop in ast.walk(tree):
        if not isinstance(loop, ast.For | ast.While):
            continue
        totals = {n.target.id for n in ast.walk(loop) if isinstance(n, ast.AugAssign)
                  and isinstance(n.op, ast.Add | ast.BitOr) and isinstance(n.target, ast.Name)}
        for node in ast.walk(loop):
            test = node.test if isinstance(node, ast.If) else None
            if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Gt | ast.GtE):
                test = test.left
            if isinstance(node, ast.If) and isinstance(test, ast.Name) and test.id in totals:
                yield node.lineno, (f"tests the running total {test.id!r}: once one case passed, every later case "
                                    "passes too")


def _file_name(expr: ast.expr, names: dict[str, str]) -> str:
    """The file name a path expression ends in, as constant text (``f"out_{k}.pkl"`` gives ``out_.pkl``)."""
    if isinstance(expr, ast.Call) and call_name(expr) in ("join", "Path") and expr.args:
        return _file_name(expr.args[-1], names)
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Div):
        return _file_name(expr.right, names)
    if isinstance(expr, ast.JoinedStr):
        text = "".join(str(v.value) for v in expr.values if isinstance(v, ast.Constant))
    elif isinstance(expr, ast.Constant) and isinstance(expr.value, str):
        text = expr.value
    else:
        text = names.get(dotted_name(expr), "")
    return text.rsplit("/", 1)[-1]


_DATA_SUFFIXES = (".pkl", ".pt", ".npy", ".npz", ".json", ".pth", ".pickle")


def _same_file_reads(tree: ast.Module) -> Iterator[tuple[int, str]]:
    """Two values loaded from paths with the same file name, then compared: the test reads back what the code
    under test wrote, and compares it with itself."""
    names: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            lit = _file_name(node.value, {})
            if lit.endswith(_DATA_SUFFIXES):
                names[dotted_name(node.targets[0])] = lit
    for scope in ast.walk(tree):
        if not isinstance(scope, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        opened: dict[str, str] = {}
        for node in ast.walk(scope):
            if isinstance(node, ast.With):
                for item in node.items:
                    call = item.context_expr
                    if isinstance(call, ast.Call) and call_name(call) == "open" and call.args:
                        lit = _file_name(call.args[0], names)
                        for sub in node.body:
                            if lit and isinstance(sub, ast.Assign) and isinstance(sub.targets[0], ast.Name):
                                opened[sub.targets[0].id] = lit
        for node in ast.walk(scope):
            if isinstance(node, ast.Call) and _COMPARE_FUNCS.match(call_name(node)) and len(node.args) >= 2:
                a, b = (opened.get(dotted_name(x)) for x in node.args[:2])
                if a and a == b:
                    yield node.lineno, f"compares two values read from files named {a!r}: the same file, written " \
                                       "by the code under test"


def _catches_assertions(handler: ast.ExceptHandler) -> bool:
    kinds = handler.type
    names = {dotted_name(k) for k in (kinds.elts if isinstance(kinds, ast.Tuple) else [kinds])} if kinds else {""}
    return bool(names & {"", "AssertionError", "Exception", "BaseException"})


_FAILED = re.compile(r"\bfail(ed|ure|s)?\b", re.IGNORECASE)
_REPORT_CALLS = frozenset({"print", "info", "warning", "warn", "error", "critical", "debug", "exception", "log",
                           "write", "fail"})


def _reports_failure(handler: ast.ExceptHandler) -> bool:
    """True when the handler logs or prints a failure ("Test Failed", "failed: ..."): the official statistics and
    the legacy grader read that line as the test's failure, so the failure is reported, not swallowed."""
    for stmt in handler.body:
        for node in ast.walk(stmt):
            if isinstance(node, ast.Call) and call_name(node) in _REPORT_CALLS and any(
                    isinstance(c, ast.Constant) and isinstance(c.value, str) and _FAILED.search(c.value)
                    for c in ast.walk(node)):
                return True
    return False


def swallowed_assertions(tree: ast.Module) -> Iterator[int]:
    """Lines of ``try`` blocks that assert, catch the failure and neither raise it again nor report it as a
    failure (a logged or printed "Test Failed" is how official tests report one)."""
    for node in ast.walk(tree):
        if not isinstance(node, ast.Try):
            continue
        asserts = any(isinstance(n, ast.Assert) or (isinstance(n, ast.Call) and call_name(n).startswith("assert"))
                      for stmt in node.body for n in ast.walk(stmt))
        if not asserts:
            continue
        for h in node.handlers:
            if _catches_assertions(h) and not _reports_failure(h) \
                    and not any(isinstance(n, ast.Raise) for s in h.body for n in ast.walk(s)):
                yield node.lineno
                break


def seeds(tree: ast.AST) -> bool:
    """True when ``tree`` seeds a random generator (``seed``, ``manual_seed``, ``default_rng``, ...)."""
    return any(isinstance(n, ast.Call) and call_name(n) in _SEED_CALLS for n in ast.walk(tree))


def unseeded_random(tree: ast.AST) -> int:
    """The line of the first random draw in a file that seeds no generator (0 when none)."""
    if seeds(tree):
        return 0
    draws = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            name = call_name(node)
            owner = dotted_name(node.func.value) if isinstance(node.func, ast.Attribute) else ""
            if name in _RANDOM_CALLS and (owner in _RANDOM_MODULES or name.endswith("_")):
                draws.append(node.lineno)
    return min(draws, default=0)


def _guarded(tree: ast.AST) -> set[int]:
    """Lines inside an ``if``/conditional expression that asks whether CUDA is available."""
    lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If | ast.IfExp) and "is_available" in ast.dump(node.test):
            lines |= {n.lineno for n in ast.walk(node) if hasattr(n, "lineno")}
    return lines


_CUDA = re.compile(r"cuda(:\d+)?")


def _is_cuda(expr: ast.expr, names: set[str]) -> bool:
    if isinstance(expr, ast.Constant) and isinstance(expr.value, str):
        return bool(_CUDA.fullmatch(expr.value))
    return isinstance(expr, ast.Name | ast.Attribute) and dotted_name(expr) in names


def gpu_need(tree: ast.AST) -> int:
    """The line of the first use of a GPU with no CPU fallback (0 when none): ``.cuda()``, a call given
    ``"cuda"``, or given a name that was set to ``"cuda"`` outside an ``is_available()`` test
    (``self.device = 'cuda'`` ... ``.to(self.device)``)."""
    guarded = _guarded(tree)
    names = {dotted_name(t) for n in ast.walk(tree) if isinstance(n, ast.Assign) and n.lineno not in guarded
             and _is_cuda(n.value, set()) for t in n.targets} - {""}
    for node in sorted((n for n in ast.walk(tree) if isinstance(n, ast.Call)), key=lambda n: n.lineno):
        if node.lineno in guarded:
            continue
        if call_name(node) == "cuda" and isinstance(node.func, ast.Attribute) \
                and dotted_name(node.func.value) != "torch":
            return node.lineno
        if any(_is_cuda(a, names) for a in [*node.args, *(k.value for k in node.keywords)]):
            return node.lineno
    return 0


def _string_names(tree: ast.Module) -> dict[str, str]:
    out = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            out.update({t.id: node.value.value for t in node.targets if isinstance(t, ast.Name)})
    return out


def hub_need(tree: ast.Module, exists: set[str]) -> tuple[int, str]:
    """(line, id) of the first model or data set fetched from the Hub by name (0, '' when none). ``exists``
    holds the local paths the name could mean."""
    strings = _string_names(tree)
    for node in sorted((n for n in ast.walk(tree) if isinstance(n, ast.Call)), key=lambda n: n.lineno):
        name = call_name(node)
        if name not in _HUB_CALLS or not node.args:
            continue
        if name == "create_model" and not any(k.arg == "pretrained" and isinstance(k.value, ast.Constant)
                                              and k.value.value is True for k in node.keywords):
            continue
        arg = node.args[0]
        value = arg.value if isinstance(arg, ast.Constant) else strings.get(arg.id) if isinstance(arg, ast.Name) \
            else None
        if isinstance(value, str) and _HUB_ID.match(value) and value not in _BUILTIN_LOADERS \
                and value.split("/")[0] not in exists:
            return node.lineno, value
    return 0, ""


def _local_names(task: Task) -> set[str]:
    repo = task.repo_dir
    out: set[str] = set()
    for base in (repo, repo / "unit_test"):
        if base.is_dir():
            out |= {p.name for p in base.iterdir()}
    return out


def _file_findings(task: Task, tf: UnitTestFile, local: set[str]) -> Iterator[Finding]:
    tree, where, name = tf.tree, tf.where, task.name
    for line in sorted(set(self_comparisons(tree))):
        yield Finding("T306", name, where, "compares a value with itself: it passes whatever the candidate "
                      "returns", line)
    seen = set()
    for line, why in [*_constant_assertions(tree), *_accumulated_flags(tree), *_same_file_reads(tree)]:
        if line not in seen:
            seen.add(line)
            yield Finding("T307", name, where, f"{why}: it passes whatever the candidate returns", line)
    for line in sorted(set(swallowed_assertions(tree))):
        yield Finding("T308", name, where, "catches a failed assertion and does not raise it again: the test "
                      "passes either way", line)
    if line := unseeded_random(tree):
        yield Finding("T309", name, where, "draws random numbers without seeding: its cases change from run to "
                      "run", line)
    if line := gpu_need(tree):
        yield Finding("T310", name, where, "needs a GPU (no CPU fallback): it fails on a machine without one",
                      line)
    line, hub_id = hub_need(tree, local)
    if line:
        yield Finding("T311", name, where, f"downloads {hub_id!r} from the Hugging Face Hub: tests run without "
                      "network", line)


def smell_findings(task: Task, impl: Implementation) -> list[Finding]:
    """The T306-T311 findings of one implementation's unit test files."""
    local = _local_names(task)
    return [f for tf in read_unit_tests(task, impl) for f in _file_findings(task, tf, local)]
