"""The headless core never imports Textual or the TUI (the same rule as the import-linter contract)."""

from __future__ import annotations

import ast
import pkgutil
import subprocess
import sys
from pathlib import Path

import lmrbench

IMPORTED_RUNTIME = {"lmrbench.runtime.lmrbench_values", "lmrbench.runtime.lmrbench_values_encoder",
                    "lmrbench.runtime.lmrbench_checkers", "lmrbench.runtime.lmrbench_wire",
                    "lmrbench.runtime.lmrbench_protocol"}
"""The runtime modules lmrbench itself imports."""


def _core_modules() -> list[str]:
    names = []
    for mod in pkgutil.walk_packages(lmrbench.__path__, "lmrbench."):
        if mod.name.startswith(("lmrbench.tui", "lmrbench.cli", "lmrbench.integrations")):
            continue  # front ends (Inspect AI, which the integrations import, has a Textual display of its own)
        if mod.name.startswith("lmrbench.runtime.") and mod.name not in IMPORTED_RUNTIME:
            continue  # sandbox-side files, shipped as files: they import each other by their sandbox names
        names.append(mod.name)
    return names


def test_importing_every_core_module_loads_no_textual() -> None:
    code = (
        "import importlib, sys\n"
        f"for name in {_core_modules()!r}:\n"
        "    importlib.import_module(name)\n"
        "bad = sorted(m for m in sys.modules if m == 'textual' or m.startswith(('textual.', 'lmrbench.tui')))\n"
        "print(','.join(bad))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "", f"core modules pulled in: {out.stdout.strip()}"


def test_import_linter_contract_holds() -> None:
    lint = Path(sys.executable).with_name("lint-imports")
    out = subprocess.run([str(lint), "--no-cache"], capture_output=True, text=True)
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-2000:]


def test_no_module_outside_the_sandbox_runtime_is_over_400_lines() -> None:
    """A module that grows past 400 lines does more than one job (the runtime files run inside the sandbox,
    where each is shipped whole)."""
    root = Path(lmrbench.__file__).parent
    long = {str(p.relative_to(root)): n for p in root.rglob("*.py") if "runtime" not in p.relative_to(root).parts
            and (n := len(p.read_text(encoding="utf-8").splitlines())) > 400}  # fmt: skip
    assert long == {}


def test_no_shipped_runtime_file_is_over_800_lines() -> None:
    """Each file that ships into a sandbox (``runtime/lmrbench_*.py`` and ``sitecustomize.py``) stays at most 800
    lines: past that it does more than one job, and is split into parts that ship beside it."""
    runtime = Path(lmrbench.__file__).parent / "runtime"
    shipped = [*sorted(runtime.glob("lmrbench_*.py")), runtime / "sitecustomize.py"]
    assert len(shipped) > 2, shipped
    long = {p.name: n for p in shipped if (n := len(p.read_text(encoding="utf-8").splitlines())) > 800}
    assert long == {}, f"shipped runtime files over 800 lines (file: lines): {long}"


def test_authoring_shows_its_families_with_at_most_12_modules_at_its_top() -> None:
    """authoring/ is a room per family (task, record, mutants, check, suggest), not one flat folder."""
    top = Path(lmrbench.__file__).parent / "authoring"
    modules = sorted(p.name for p in top.glob("*.py") if p.name != "__init__.py")
    families = sorted(p.name for p in top.iterdir() if (p / "__init__.py").is_file())
    assert len(modules) <= 12, modules
    assert families == ["check", "mutants", "record", "suggest", "task"]


def _lmrbench_imports(path: Path, name: str, known: set[str]) -> set[str]:
    """The lmrbench modules ``name`` imports anywhere in its body (lazy imports included)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").startswith("lmrbench"):
            found.add(node.module or "")
            found.update(f"{node.module}.{a.name}" for a in node.names)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.startswith("lmrbench"))
    return {m for m in found if m in known and m != name}


def _cycles(deps: dict[str, set[str]]) -> list[list[str]]:
    """The import cycles of a module graph: its strongly connected components of more than one module (Tarjan,
    iterative), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(deps):
        if root in index:
            continue
        work = [(root, iter(sorted(deps[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(deps.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_the_cycle_finder_finds_a_cycle_of_any_length() -> None:
    ring = {f"m{k}": {f"m{(k + 1) % 5}"} for k in range(5)} | {"x": {"m0"}, "y": set()}
    assert _cycles(ring) == [[f"m{k}" for k in range(5)]]
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": set()}) == []


def test_no_modules_import_each_other_in_a_cycle_of_any_length() -> None:
    """Layers forbid cycles between packages; this forbids them between modules, however long, lazy imports
    included (a lazy import back is how a cycle hides)."""
    root = Path(lmrbench.__file__).parent
    paths = {}
    for p in root.rglob("*.py"):
        parts = p.relative_to(root).with_suffix("").parts
        name = ".".join(("lmrbench", *parts)).removesuffix(".__init__")
        paths[name] = p
    deps = {name: _lmrbench_imports(p, name, set(paths)) for name, p in paths.items()}
    assert _cycles(deps) == []


def _functions(path: Path) -> dict[str, ast.FunctionDef]:
    """The functions of a module, and its classes' methods as ``Class.method``, by name."""
    found: dict[str, ast.FunctionDef] = {}
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.FunctionDef):
            found[node.name] = node
        elif isinstance(node, ast.ClassDef):
            found |= {f"{node.name}.{f.name}": f for f in node.body if isinstance(f, ast.FunctionDef)}
    return found


def _parameters(fn: ast.FunctionDef) -> int:
    a = fn.args
    return len(a.posonlyargs) + len(a.args) + len(a.kwonlyargs) + bool(a.vararg) + bool(a.kwarg)


def test_a_run_is_executed_from_one_request_built_before_it_starts() -> None:
    """The executors take the planned request, a cancel and where its reports go (at most 4 parameters, self
    included), never a dozen keywords; trust travels with the tagged variant, never as a ``trusted=`` flag, and
    no variant's kind is guessed from its type (``isinstance(..., Path)``/``dict``) anywhere in harness/."""
    harness = Path(lmrbench.__file__).parent / "harness"
    executors = {"sandbox.py": "Sandbox.run", "pytest_run.py": "run_pytest", "legacy.py": "run_legacy"}
    counts = {name: _parameters(_functions(harness / file)[name]) for file, name in executors.items()}
    assert all(n <= 4 for n in counts.values()), counts
    flagged, guessed = [], []
    for path in sorted(harness.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Call):
                continue
            flagged += [f"{path.name}:{node.lineno}" for k in node.keywords if k.arg == "trusted"]
            if isinstance(node.func, ast.Name) and node.func.id == "isinstance" and len(node.args) == 2:
                kinds = {n.id for n in ast.walk(node.args[1]) if isinstance(n, ast.Name)}
                if "Path" in kinds or ("dict" in kinds and "variant" in ast.unparse(node.args[0])):
                    guessed.append(f"{path.name}:{node.lineno}")
    assert flagged == [] and guessed == [], (flagged, guessed)


def test_the_executors_of_units_ask_a_transport_and_never_reach_into_its_client() -> None:
    """execution/ learns an environment's image and framework, and the base image, from the transport's own
    methods (``Transport.environment``): no ``.client`` (an engine connection) is touched there."""
    execution = Path(lmrbench.__file__).parent / "benchmark" / "execution"
    reached = [f"{p.name}:{n.lineno}" for p in sorted(execution.glob("*.py"))
               for n in ast.walk(ast.parse(p.read_text(encoding="utf-8")))
               if isinstance(n, ast.Attribute) and n.attr in ("client", "_client")]
    assert reached == []
