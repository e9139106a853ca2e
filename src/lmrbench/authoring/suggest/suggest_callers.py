"""Find code that runs each candidate function: run commands (the author's, else the repository's own tests and
example scripts) under the recorder, within a time budget, and count the distinct calls each candidate got.

The commands run in a sandbox as ``task record`` runs them, with the recorder on (``runtime/lmrbench_record.py``)
and every candidate as a target, on the repository as it is (a provisional task around it gives the sandbox the
repository's requirements; when they cannot be installed, nothing runs and the report says why). Every target is
recorded wherever it is called, inside another target's call too. The recorder saves up to ``max_calls``
distinct calls per target and process; a call
whose values the codec cannot carry is noted with the reason, and a saved call is replayed from its recorded
inputs, so a candidate whose replay differs is said to be non-deterministic.
"""

from __future__ import annotations

import ast
import json
import shlex
import shutil
import tempfile
import textwrap
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from lmrbench import pyparse
from lmrbench.authoring.record.captured_calls import read_calls, read_errors, read_summaries
from lmrbench.authoring.record.record import RECORD_PRELUDE
from lmrbench.authoring.task.metadata import is_test_file
from lmrbench.core.source.index import FunctionInfo, python_files
from lmrbench.core.taskset import Task
from lmrbench.core.treeview import TreeView
from lmrbench.defaults import SUGGEST_BUDGET as DEFAULT_BUDGET
from lmrbench.errors import EnvironmentUnavailable
from lmrbench.harness.request import SandboxRequest
from lmrbench.harness.sandbox import Sandbox
from lmrbench.progress import NullProgress, Progress, check_cancel
from lmrbench.runtime import RECORD_RUNTIME, runtime_files
from lmrbench.runtime.lmrbench_protocol import ENV_RECORD_SPEC
from lmrbench.schemas.task_info import TaskInfo

DEFAULT_MAX_CALLS = 20
"""Distinct calls saved per candidate and process: counts stop there (shown as ``20+``)."""
MAX_SCRIPTS = 8
"""Example scripts run at most, when no command is given."""
MIN_SLICE = 5.0
"""A command is not started with less of the budget left than this."""
_SCRIPT_DIRS = ("examples", "example", "scripts", "demo", "demos")
_SCRIPT_PREFIXES = ("train", "main", "run", "demo", "example")
REQUIREMENT_FILES = ("requirements.txt", "environment.yml", "environment.yaml")
"""The files a sandbox reads a repository's requirements from (``environments.requirements_source``)."""
_ENV_DIRS = frozenset({".venv", "venv", "env", "node_modules", "build", "dist"})


@dataclass(frozen=True)
class CommandRun:
    """How one command ended."""

    command: str
    exit_code: int | None
    timed_out: bool
    seconds: float
    note: str = ""
    """Why it did not run, or the end of its output when it failed."""

    @property
    def ok(self) -> bool:
        """True when it ran to a clean exit (``task record`` needs one)."""
        return self.exit_code == 0 and not self.timed_out


@dataclass
class Calls:
    """What the commands did with one candidate."""

    calls: int = 0
    """Distinct calls saved, over every command and process."""
    capped: bool = False
    """True when a process reached ``max_calls``: there were more."""
    by_command: dict[str, int] = field(default_factory=dict)
    codec: str = ""
    """``yes``, ``no: <why>``, ``replay differs: <why>``; empty when nothing called it."""
    unsaved: int = 0
    """Calls seen that could not be saved (their values cannot be, say: ``codec`` says why)."""

    def caller(self, runs: list[CommandRun]) -> str | None:
        """The command to record it with: the one with most calls among those that exited cleanly, else any."""
        clean = {r.command for r in runs if r.ok}
        ranked = sorted(self.by_command.items(), key=lambda kv: (kv[0] not in clean, -kv[1]))
        return ranked[0][0] if ranked else None

    @property
    def count_text(self) -> str:
        """``7``, or ``20+`` when capped."""
        return f"{self.calls}+" if self.capped else str(self.calls)


@dataclass
class CallerReport:
    """The commands run and each candidate's calls (keyed ``file::qualname``)."""

    runs: list[CommandRun]
    calls: dict[str, Calls]
    unavailable: str = ""
    """Why nothing ran: the repository's environment cannot be had (a requirement that cannot install); the
    candidates are ranked without calls."""


def _is_generator(source: str) -> bool:
    """True when the function whose source this is yields (in its own body, not in a nested function)."""
    try:
        tree = pyparse.parse(textwrap.dedent(source))
    except SyntaxError:
        return False  # the recorder itself says so, and the candidate is left out (see find_callers)
    stack: list[ast.AST] = [node for f in tree.body if isinstance(f, ast.FunctionDef) for node in f.body]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Yield | ast.YieldFrom):
            return True
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda | ast.ClassDef):
            stack.extend(ast.iter_child_nodes(node))
    return False


def recordable(function: FunctionInfo, lines: list[str]) -> str | None:
    """Why the recorder cannot wrap ``function`` (None when it can): nested functions, properties and
    generators are not recorded."""
    if function.is_nested:
        return "a nested function"
    if function.is_property:
        return "a property"
    if _is_generator("\n".join(lines[function.lineno - 1 : function.end_lineno])):
        return "a generator"
    return None


def default_commands(root: Path) -> list[str]:
    """The repository's own tests (``python -m pytest`` on their folders) and example scripts."""
    files = python_files(Path(root))
    test_dirs = sorted({f.split("/")[0] if "/" in f else "." for f in files
                        if is_test_file(f) and f.rsplit("/", 1)[-1].startswith("test")})
    commands = []
    if test_dirs:
        commands.append("python -m pytest -q -p no:cacheprovider " + " ".join(map(shlex.quote, test_dirs)))
    scripts = [f for f in files if f.split("/")[0] in _SCRIPT_DIRS and f.count("/") == 1
               and not f.endswith("__init__.py")]
    scripts += [f for f in files if "/" not in f and f.startswith(_SCRIPT_PREFIXES)]
    commands += [f"python {shlex.quote(s)}" for s in scripts[:MAX_SCRIPTS]]
    return commands


def probe_task(root: Path, folder: Path) -> Task:
    """A provisional task in ``folder`` whose environment is the repository's: its requirement files copied."""
    folder.mkdir(parents=True, exist_ok=True)
    for name in REQUIREMENT_FILES:
        if (Path(root) / name).is_file():
            shutil.copyfile(Path(root) / name, folder / name)
    info = TaskInfo(instance_id=0, folder_name=folder.name, repo_folder_name="repo", implementations=[])
    return Task(path=folder, info=info)


def find_callers(
    root: Path,
    targets: list[FunctionInfo],
    commands: list[str],
    *,
    sandbox: Sandbox,
    budget: float = DEFAULT_BUDGET,
    max_calls: int = DEFAULT_MAX_CALLS,
    progress: Progress | None = None,
    cancel: threading.Event | None = None,
) -> CallerReport:
    """Run ``commands`` on the repository at ``root`` with the recorder on ``targets``; count their calls."""
    progress = progress or NullProgress()
    root = Path(root).resolve()
    report = CallerReport([], {t.ref: Calls() for t in targets})
    if not targets or not commands:
        return report
    wanted = list(targets)
    drop = frozenset(e.name for e in root.iterdir() if e.is_dir() and e.name in _ENV_DIRS)
    with tempfile.TemporaryDirectory(prefix="lmrbench-suggest-") as tmp:
        task = probe_task(root, Path(tmp) / f"suggest-{root.name}")
        progress.start("environment of the repository", None)
        try:
            sandbox.prepare(task, progress=progress, cancel=cancel)
        except EnvironmentUnavailable as exc:
            report.unavailable = exc.problem
            return report
        deadline = time.monotonic() + budget
        runs = 0
        for command in commands:
            while True:  # again without a target the recorder could not wrap (it stops recording at the first)
                check_cancel(cancel)
                left = deadline - time.monotonic()
                if left < MIN_SLICE or not wanted:
                    why = "the time budget was spent" if wanted else "no candidate left to record"
                    report.runs.append(CommandRun(command, None, False, 0.0, f"not run: {why}"))
                    break
                progress.start(f"running `{command}`", None)
                runs += 1
                out = Path(tmp) / f"out-{runs}"
                out.mkdir()
                spec = {"targets": [{"file": t.file, "qualname": t.qualname} for t in wanted],
                        "max_calls": max_calls, "max_bytes": 20_000_000, "factory": None,
                        "checker": {"kind": "numeric"}, "nested": True}
                request = SandboxRequest(task, TreeView(root, drop), ["sh", "-c", RECORD_PRELUDE + command], left,
                                         env={ENV_RECORD_SPEC: json.dumps(spec)},
                                         harness_files=runtime_files(RECORD_RUNTIME))
                result = sandbox.run(request, out, cancel)
                failed = _not_wrapped(out, wanted)
                if failed is not None:
                    ref, message = failed
                    report.calls[ref].codec = f"no: {message}"
                    wanted = [t for t in wanted if t.ref != ref]
                    continue
                note = result.infra_error or ("" if result.exit_code == 0 else _tail(result.output))
                report.runs.append(CommandRun(command, result.exit_code, result.timed_out, result.duration, note))
                _count(out, command, max_calls, report.calls)
                break
    return report


def _not_wrapped(out: Path, targets: list[FunctionInfo]) -> tuple[str, str] | None:
    """(ref, message) when the recorder stopped because it could not wrap one of ``targets``."""
    for message in read_errors(out):
        if message.startswith("cannot instrument "):
            for t in targets:
                if message.startswith(f"cannot instrument {t.ref}: "):
                    return t.ref, "cannot be recorded: " + message.split(": ", 1)[1]
    return None


def _tail(output: str, lines: int = 3) -> str:
    kept = [ln.strip() for ln in output.strip().splitlines() if ln.strip()]
    return " | ".join(kept[-lines:])


def _count(out: Path, command: str, max_calls: int, calls: dict[str, Calls]) -> None:
    """Add what one command's recorder output says to ``calls``."""
    seen: dict[str, set[str]] = {}
    for path in sorted(out.glob("calls-*.jsonl")):
        for entry in read_calls(path, out):
            target = entry.target
            if target not in calls or entry.digest in seen.setdefault(target, set()):
                continue
            seen[target].add(entry.digest)
            c = calls[target]
            c.calls += 1
            c.by_command[command] = c.by_command.get(command, 0) + 1
            if entry.replay in ("identical", "close"):
                c.codec = "yes"
            elif not c.codec:
                c.codec = f"replay differs: {entry.replay_detail}"
    for summary in read_summaries(out):
        for target, n in summary.saved.items():
            if target in calls and n >= max_calls:
                calls[target].capped = True
        for target, n in summary.unsaved.items():
            if target in calls:
                calls[target].unsaved += n
        for note in summary.skipped:
            noted = calls.get(note.target)
            if noted is not None and not noted.codec:
                noted.codec = "no: " + note.message.split(": ", 1)[-1]
    for message in read_errors(out):
        for target, c in calls.items():
            if message.startswith(target) and not c.codec:
                c.codec = "no: " + message.split(": ", 1)[-1]
