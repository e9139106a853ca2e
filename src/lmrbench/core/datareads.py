"""The data files a unit test reads outside ``unit_test/``, read statically: the one trust reader.

``task check`` (F116: what info.json's ``trusted_files`` does not list), the grader's candidate view and
``export-agent`` (:func:`withheld_paths`: every path the tests read, listed or not, less what the goal code
reads itself, found by the same reader over the goal files: :func:`goal_reads`) all take it from here.
A path is followed through what a test builds it from: string constants, f-strings (a placeholder matches any
text, a placeholder naming a path is that path), ``+`` of strings, ``os.path.join`` chains,
``Path(...) / "tensors" / f"impl_{k}"`` and ``.joinpath`` chains, ``Path(__file__).parent`` and ``.parents[k]``,
``os.path.dirname(__file__)`` (nested to any depth), and names (``self.x``) assigned once from such an expression,
through chains of names (``HERE = Path(__file__).resolve().parent``, ``REPO = HERE.parent``,
``DATA = REPO / "tensors"``).
What the test hands to the repository's own code (a function imported from a module of the repository, or a goal
function) is that code's input, not data the test compares with (06-RepE's ``data/facts/facts_true_false.csv``,
given to the repository's ``honesty_function_dataset``); folders put on ``sys.path`` are code; paths that are
only created or written are not read.
"""

from __future__ import annotations

import ast
import fnmatch
import functools
import posixpath
import re
from collections.abc import Callable, Iterator
from pathlib import Path, PurePosixPath

from lmrbench import pyparse
from lmrbench.core.taskset import Task
from lmrbench.core.testfiles import UnitTestFile, call_name, dotted_name, read_unit_tests
from lmrbench.core.trust import is_trusted, trusted_paths
from lmrbench.defaults import UNIT_TEST_DIR
from lmrbench.schemas.task_info import Implementation

_WRAPPERS = frozenset({"Path", "PurePath", "PosixPath", "PurePosixPath", "abspath", "realpath", "normpath",
                       "expanduser", "resolve", "absolute", "str", "fspath"})
_NOT_READS = frozenset({"makedirs", "mkdir", "exists", "isdir", "isfile", "rmtree", "remove", "unlink", "save",
                        "savez", "savez_compressed", "dump", "to_csv", "write_text", "write_bytes", "chdir",
                        "add_argument"})
_MAX_MATCHES = 50
_FILE = "\0file"


class _Paths:
    """Path expressions of one test file, evaluated to repository-relative patterns."""

    def __init__(self, tree: ast.Module, test_rel: str) -> None:
        self.test_rel = test_rel
        self.env: dict[str, ast.expr] = {}
        self.parent: dict[ast.AST, ast.AST] = {}
        for node in ast.walk(tree):
            for child in ast.iter_child_nodes(node):
                self.parent[child] = node
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and (name := dotted_name(node.targets[0])):
                self.env.setdefault(name, node.value)  # the first value: later ones are usually derived
            elif isinstance(node, ast.AnnAssign) and node.value is not None \
                    and (name := dotted_name(node.target)):
                self.env.setdefault(name, node.value)

    def value(self, expr: ast.AST, depth: int = 0) -> str | None:
        """The path ``expr`` builds (``*`` for what cannot be known), or None when it builds none."""
        if depth > 12:
            return None
        if isinstance(expr, ast.Constant) and isinstance(expr.value, str):
            return expr.value if 0 < len(expr.value) < 300 and "\n" not in expr.value else None
        if isinstance(expr, ast.JoinedStr):
            return "".join(self._placeholder(v, depth) for v in expr.values)
        if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Add):  # "tensors/" + name
            left, right = self.value(expr.left, depth + 1), self.value(expr.right, depth + 1)
            return None if left is None and right is None else (left or "*") + (right or "*")
        if isinstance(expr, ast.Name) and expr.id == "__file__":
            return _FILE
        if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Div):
            return self._join([expr.left, expr.right], depth)
        if isinstance(expr, ast.Subscript) and isinstance(expr.value, ast.Attribute) \
                and expr.value.attr == "parents" and isinstance(expr.slice, ast.Constant) \
                and isinstance(expr.slice.value, int) and 0 <= expr.slice.value < 8:  # Path(...).parents[1]
            inner = self.value(expr.value.value, depth + 1)
            return None if inner is None else posixpath.join(inner, *[".."] * (expr.slice.value + 1))
        if isinstance(expr, ast.Attribute) and expr.attr == "parent":
            inner = self.value(expr.value, depth + 1)
            return None if inner is None else posixpath.join(inner, "..")
        if isinstance(expr, ast.Call):
            name = call_name(expr)
            if name == "join" and expr.args:
                return self._join(list(expr.args), depth)
            if name == "joinpath" and isinstance(expr.func, ast.Attribute):  # REPO.joinpath("tensors", k)
                return self._join([expr.func.value, *expr.args], depth)
            if name == "dirname" and expr.args:
                inner = self.value(expr.args[0], depth + 1)
                return None if inner is None else posixpath.join(inner, "..")
            if name in _WRAPPERS:
                if expr.args:
                    return self._join(list(expr.args), depth)
                if isinstance(expr.func, ast.Attribute):  # Path(...).resolve()
                    return self.value(expr.func.value, depth + 1)
            return None
        if isinstance(expr, ast.Name | ast.Attribute) and (name := dotted_name(expr)) in self.env:
            return self.value(self.env[name], depth + 1)
        return None

    def _placeholder(self, part: ast.expr, depth: int) -> str:
        """An f-string's part: its text, the path a placeholder names (``f"{REPO}/tensors"``), else ``*``."""
        if isinstance(part, ast.Constant):
            return str(part.value)
        if isinstance(part, ast.FormattedValue) and part.format_spec is None \
                and isinstance(part.value, ast.Name | ast.Attribute | ast.Call):
            inner = self.value(part.value, depth + 1)
            if inner is not None and "*" not in inner:
                return inner
        return "*"

    def _join(self, parts: list[ast.expr], depth: int) -> str | None:
        values = [self.value(p, depth + 1) for p in parts]
        if all(v is None for v in values):
            return None
        known = [v if v is not None else "*" for v in values]
        while known and known[0] == "*" and len(known) > 1:  # an unknown base: the rest is relative to a guess
            known = known[1:]
        return posixpath.join(*known)

    def where(self, rel: str) -> str:
        """``rel`` with the test file's own path in place of ``__file__``."""
        return rel.replace(_FILE, self.test_rel)

    def is_root(self, node: ast.AST) -> bool:
        """True when ``node`` is a whole path expression (not a part of a larger one)."""
        up = self.parent.get(node)
        if isinstance(up, ast.BinOp) and isinstance(up.op, ast.Div) or isinstance(up, ast.JoinedStr):
            return False
        if isinstance(up, ast.Call) and node in up.args and call_name(up) in {"join", "joinpath", "dirname",
                                                                               *_WRAPPERS}:
            return False
        if isinstance(up, ast.BinOp) and isinstance(up.op, ast.Add) or isinstance(up, ast.FormattedValue):
            return False
        if isinstance(up, ast.Attribute) and up.attr in ("parent", "parents"):
            return False
        return not (isinstance(up, ast.Attribute) and isinstance(self.parent.get(up), ast.Call)
                    and call_name(self.parent[up]) in _WRAPPERS)  # type: ignore[arg-type]

    def consumers(self, node: ast.AST, depth: int = 0) -> list[ast.AST]:
        """The calls (or other places) a path expression's value ends up in, through names it is assigned to."""
        up = self.parent.get(node)
        while isinstance(up, ast.keyword | ast.Starred):
            up = self.parent.get(up)
        if isinstance(up, ast.Assign) and depth < 3 and (name := dotted_name(up.targets[0])):
            uses = [n for n in self.parent if isinstance(n, ast.Name | ast.Attribute) and dotted_name(n) == name
                    and isinstance(getattr(n, "ctx", None), ast.Load)]
            return [c for u in uses for c in self.consumers(u, depth + 1)] or [up]
        return [up] if up is not None else []


def _repo_modules(task: Task, tree: ast.Module, paths: _Paths, test_dir: str) -> set[str]:
    """Top-level module names the test can import from the repository (its root, the test's folder and the
    folders it puts on ``sys.path``). A module inside ``unit_test/`` is the tests' own (the recorder's
    ``lmrbench_values.load_case``): what it is handed, the test reads, so it is not counted."""
    roots = {"", test_dir}
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and call_name(node) in ("append", "insert") and node.args \
                and dotted_name(node.func).startswith("sys.path"):
            v = paths.value(node.args[-1])
            if v is not None:
                roots.add(posixpath.normpath(paths.where(v)))
    out = set()
    repo = task.repo_dir
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and not node.level:
            top = node.module.split(".")[0]
            if any((repo / r / f"{top}.py").is_file() or (repo / r / top).is_dir() for r in roots
                   if not r.startswith("..") and not _in_tests(posixpath.join(r, top))):
                out |= {a.asname or a.name for a in node.names}
    return out


def _in_tests(rel: str) -> bool:
    """True when the repository-relative ``rel`` lies in the tests' folder (``unit_test/``)."""
    return PurePosixPath(posixpath.normpath(rel)).parts[:1] == (UNIT_TEST_DIR,)


def _kind(call: ast.AST, code: set[str]) -> str:
    """What a consumer does with a path: ``read`` (the test reads it), ``input`` (the repository's code gets
    it), or ``none`` (code folders, created or written paths)."""
    if isinstance(call, ast.BinOp | ast.JoinedStr | ast.FormattedValue) or isinstance(call, ast.Attribute) \
            and call.attr == "joinpath":
        return "none"  # a part of a longer path, which is judged on its own
    if not isinstance(call, ast.Call):
        return "read"
    name = call_name(call)
    if name in {"join", "joinpath", "dirname", *_WRAPPERS}:
        return "none"
    if name in ("append", "insert") and dotted_name(call.func).startswith("sys.path"):
        return "none"
    if name in _NOT_READS:
        return "none"
    if isinstance(call.func, ast.Name) and call.func.id in code:
        return "input"
    return "read"


def _matches(task: Task, pattern: str, test_dir: str) -> set[str]:
    """Data files and folders outside ``unit_test/`` that ``pattern`` names (``*`` for any text), relative to
    the repository, from the repository root or the test's folder; a folder ends in ``/``."""
    repo = task.repo_dir.resolve()
    tests = repo / "unit_test"
    out: set[str] = set()
    if len(pattern) > 255 or "\0" in pattern or pattern.startswith("/") \
            or ("*" in pattern and len(re.sub(r"[^A-Za-z0-9]", "", pattern)) < 3):
        return out  # f"{a}/{b}" or f"{name}.pt" names nothing in particular
    for base in ("", test_dir):
        rel = posixpath.normpath(posixpath.join(base, pattern))
        if rel.startswith("..") or rel in (".", "*"):
            continue
        try:
            found = list(repo.glob(rel))[:_MAX_MATCHES] if "*" in rel else [repo / rel]
        except (OSError, ValueError, NotImplementedError):
            continue
        for target in found:
            try:
                target = target.resolve()
                if target == repo or repo not in target.parents or tests == target or tests in target.parents:
                    continue
                if target.is_file() and target.suffix != ".py":
                    out.add(target.relative_to(repo).as_posix())
                elif target.is_dir() and any(p.suffix != ".py" for p in target.iterdir() if p.is_file()):
                    out.add(target.relative_to(repo).as_posix() + "/")
            except (OSError, ValueError):
                continue
    return out


def outside_data(task: Task, impl: Implementation, tf: UnitTestFile) -> set[str]:
    """Data outside ``unit_test/`` that the test file ``tf`` reads itself (repository-relative; folders end in
    ``/``): not what it only hands to the repository's code or the goal functions, nor code folders."""
    test_dir = posixpath.dirname(tf.rel)
    out: set[str] = set()
    for pattern, kinds in _read_patterns(task, impl, tf):
        found = _matches(task, pattern, test_dir)
        if found and "read" in kinds():
            out |= found
    return out


def _read_patterns(task: Task, impl: Implementation, tf: UnitTestFile) -> Iterator[tuple[str, Callable[[], set[str]]]]:
    """(repository-relative pattern, what the test does with it, asked when needed) for every whole path
    expression of ``tf``."""
    paths = _Paths(tf.tree, tf.rel)
    test_dir = posixpath.dirname(tf.rel)
    code = _repo_modules(task, tf.tree, paths, test_dir) | {q.split(".")[-1] for q in impl.qualnames} \
        | {q.split(".")[0] for q in impl.qualnames}
    for node in list(paths.parent):
        if not isinstance(node, ast.Constant | ast.JoinedStr | ast.BinOp | ast.Call | ast.Attribute) \
                or not paths.is_root(node):
            continue
        value = paths.value(node)
        if value is not None and value != _FILE:
            yield paths.where(value), functools.partial(_kinds, paths, node, code)


def _kinds(paths: _Paths, node: ast.AST, code: set[str]) -> set[str]:
    consumers = paths.consumers(node)
    kinds = {_kind(c, code) for c in consumers} or {"read"}
    return kinds | ({"load"} if any(_loads(c) for c in consumers) else set())


_LOADERS = frozenset({"load", "loadtxt", "genfromtxt", "fromfile", "load_npz", "load_case", "load_file", "safe_open",
                      "read_csv", "read_json", "read_pickle", "read_parquet", "read_table", "read_text", "read_bytes",
                      "imread", "open"})
_WRITE_MODE = re.compile(r"[wax+]")


def _loads(consumer: ast.AST) -> bool:
    """True when ``consumer`` loads the file a path names (``torch.load(p)``, ``open(p)``, ``p.read_bytes()``),
    not when it writes it (``open(p, "w")``) or only mentions it (an assertion's message)."""
    if isinstance(consumer, ast.Attribute):
        return consumer.attr in ("read_text", "read_bytes", "open")
    if not isinstance(consumer, ast.Call) or call_name(consumer) not in _LOADERS:
        return False
    mode = next((a for a in consumer.args[1:2]), None) or next(
        (k.value for k in consumer.keywords if k.arg == "mode"), None)
    return not (call_name(consumer) == "open" and isinstance(mode, ast.Constant)
                and _WRITE_MODE.search(str(mode.value)))


def missing_data(task: Task, impl: Implementation, tf: UnitTestFile) -> list[str]:
    """Data files ``tf`` loads (``torch.load``, ``np.load``, ``open`` to read, ...) by a name spelled whole
    (``"tensors/losses.pt"``; no placeholder) that exist nowhere in the repository, from its root or the test's
    folder, and that the test does not write itself (repository-relative, sorted)."""
    repo = task.repo_dir
    test_dir = posixpath.dirname(tf.rel)
    patterns = [(p, kinds) for p, kinds in _read_patterns(task, impl, tf)
                if "*" not in p and not p.startswith("/") and len(p) < 256 and "\0" not in p
                and posixpath.splitext(posixpath.basename(p))[1] not in ("", ".py")]
    known = [(p, kinds()) for p, kinds in patterns]
    written = {p for p, kinds in known if "none" in kinds}
    out = set()
    for pattern, kinds in known:
        if "load" not in kinds or pattern in written:
            continue
        rels = [posixpath.normpath(posixpath.join(base, pattern)) for base in ("", test_dir)]
        if any(r.startswith("..") for r in rels):
            continue
        try:
            if not any((repo / r).exists() for r in rels):
                out.add(rels[0])
        except (OSError, ValueError):
            continue
    return sorted(out)


def git_ignored(repo: Path, rel: str) -> str | None:
    """The line of ``repo``'s top ``.gitignore`` that ignores ``rel`` (repository-relative), or None: a file
    the repository ignores was never committed, so a copy of the repository lacks it. Plain patterns, folder
    patterns (``tensors/``), anchored ones (``/out``) and globs; ``!`` negations undo an earlier match."""
    try:
        lines = (repo / ".gitignore").read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return None
    parts = PurePosixPath(rel).parts
    hit = None
    for raw in lines:
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        negate, pat = line.startswith("!"), line.lstrip("!")
        folder, pat = pat.endswith("/"), pat.strip("/")
        anchored = "/" in pat
        prefixes = ["/".join(parts[: k + 1]) for k in range(len(parts) - (1 if folder else 0))]
        names = [parts[k] for k in range(len(parts) - (1 if folder else 0))]
        matched = any(fnmatch.fnmatchcase(p, pat) for p in prefixes) if anchored \
            else any(fnmatch.fnmatchcase(n, pat) for n in names)
        if matched:
            hit = None if negate else line
    return hit


def read_data(task: Task) -> list[str]:
    """The data outside ``unit_test/`` that any implementation's tests read themselves (repository-relative,
    sorted; no trailing ``/``), whether info.json lists it or not."""
    found: set[str] = set()
    for impl in task.info.implementations:
        for tf in read_unit_tests(task, impl):
            found |= {p.rstrip("/") for p in outside_data(task, impl, tf)}
    return sorted(found)


def withheld_paths(task: Task) -> list[str]:
    """What the candidate's view and an agent export leave out: the trusted paths info.json names
    (``core.trust.trusted_paths``) and every data path the tests read (:func:`read_data`), before any
    ``validate`` has listed it, except one the goal code reads itself (:func:`goal_reads`: hidden, the golden
    code would fail; ``validate`` decides it)."""
    listed = trusted_paths(task)
    goal = [g.rstrip("/") for g in goal_reads(task)]
    return listed + [p for p in read_data(task) if not is_trusted(p, listed)
                     and not any(g == p or p.startswith(g + "/") or g.startswith(p + "/") for g in goal)]


def goal_reads(task: Task) -> set[str]:
    """The data files and folders the goal files name by a path this reader follows (a string, a join, a name
    chain from ``__file__``), repository-relative, folders ending in ``/``; a name only a comment or a sentence
    of a docstring holds is none."""
    out: set[str] = set()
    for impl in task.info.implementations:
        for goal in impl.goal_files:
            path = task.repo_dir / goal
            if not path.is_file() or path.is_symlink():
                continue
            try:
                tree = pyparse.parse(path.read_bytes()[:2_000_000].decode("utf-8", errors="replace"))
            except SyntaxError:
                continue
            paths = _Paths(tree, goal)
            for node in list(paths.parent):
                if isinstance(node, ast.Constant | ast.JoinedStr | ast.BinOp | ast.Call | ast.Attribute) \
                        and paths.is_root(node) and (value := paths.value(node)) not in (None, _FILE):
                    out |= _matches(task, paths.where(str(value)), posixpath.dirname(goal))
    return out


__all__ = ["git_ignored", "goal_reads", "missing_data", "outside_data", "read_data", "withheld_paths"]

