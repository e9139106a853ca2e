"""Static checks of a task folder (``lmrbench task check``): every problem as a :class:`Finding`.

Files declared in info.json exist and parse, the goal functions exist, no symlink leaves the task, no test is
offered as retrieval context, no copy or near-copy of a golden body and no compiled Python is left in the
repository (:mod:`lmrbench.authoring.check.leakscan`), the tests can tell a candidate from the golden code
(:mod:`lmrbench.authoring.check.testlint`, :mod:`lmrbench.authoring.check.testsmells`), the data they read is real and
trusted (:mod:`lmrbench.authoring.check.taskdata`), the recorded tests use the checker info.json names, and the
Dockerfile follows the conventions. The codes are listed in :data:`lmrbench.authoring.check.findings.RULES`; only the
checks whose codes are selected run.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from lmrbench import pyparse
from lmrbench.authoring.check import nearcopy
from lmrbench.authoring.check.findings import Finding, Selection
from lmrbench.authoring.check.leakscan import (
    MIN_LEAK_LINES,
    compiled_files,
    golden_bodies,
    golden_body_text,
    pyc_contents,
    scan_task,
)
from lmrbench.core.taskset import Task, load_taskset
from lmrbench.defaults import recording_folder
from lmrbench.errors import LmrError
from lmrbench.schemas.task_info import Implementation

ALL = Selection()


def _norm_line(line: str) -> str:
    return re.sub(r"\s+", "", line.split("#", 1)[0])


def golden_body_lines(source: str, qualname: str) -> list[str] | None:
    """The golden body of ``qualname`` (docstring excluded) as normalised, non-blank code lines."""
    text = golden_body_text(source, qualname)
    if text is None:
        return None
    return [n for n in (_norm_line(ln) for ln in text.splitlines()) if n]


def find_copies(task: Task, impl: Implementation) -> list[nearcopy.NearCopy]:
    """Copies and near-copies of ``impl``'s golden bodies in the task's repository, best first."""
    return scan_task(task, [impl]).copies.get(impl.index, [])


def find_leaks(task: Task, impl: Implementation) -> list[str]:
    """Files of the task's repository that hold a copy or near-copy of a golden body of ``impl`` (in code, or in
    the comments of a masked goal file) that carries the body's distinguishing statements (L201, L202, L206; a
    near-copy lacking them is L207, a warning)."""
    scan = scan_task(task, [impl])
    return sorted({c.path for c in [*scan.copies.get(impl.index, []), *scan.commented.get(impl.index, [])]
                   if not c.lacks})


def escaping_symlinks(task_dir: Path) -> list[str]:
    """Symlinks in the task folder whose target resolves outside it, relative to the folder."""
    root = task_dir.resolve()
    out = []
    for base, dirs, files in os.walk(task_dir):
        for name in [*dirs, *files]:
            p = Path(base) / name
            if p.is_symlink():
                target = p.resolve()
                if target != root and root not in target.parents:
                    out.append(p.relative_to(task_dir).as_posix())
    return sorted(out)


def _file_findings(task: Task, impl: Implementation) -> list[Finding]:
    """F101-F111, F114 of one implementation."""
    out: list[Finding] = []
    repo = task.info.repo_folder_name

    def add(code: str, path: str, message: str, line: int = 0) -> None:
        out.append(Finding(code, task.name, path, f"implementation {impl.index}: {message}", line))

    if not impl.qualnames:
        add("F106", "info.json", "names no goal_function")
    goldens = impl.golden_file if isinstance(impl.golden_file, list) else [impl.golden_file] if impl.golden_file else []
    golden_src: dict[str, str] = {}
    for k, rel in enumerate(goldens):
        gp = task.golden_path(impl, k)
        if not gp.is_file():
            add("F102", "info.json", f"golden_file {rel!r} does not exist")
            continue
        text = gp.read_bytes().decode("utf-8", errors="replace")
        try:
            pyparse.parse(text)
            golden_src[rel] = text
        except SyntaxError as exc:
            add("F103", rel, f"golden file does not parse: {exc.msg}", exc.lineno or 0)
    if not goldens:
        add("F102", "info.json", "has no golden_file")
    for goal in impl.goal_files:
        if not (task.repo_dir / goal).is_file():
            add("F101", "info.json", f"goal_file {goal!r} does not exist in {repo}/")
    for q in impl.qualnames:
        if golden_src and not any(pyparse.find_def(pyparse.parse(s), q) for s in golden_src.values()):
            add("F104", next(iter(golden_src)), f"{q} is not defined in the golden file")
        masked = [task.repo_dir / g for g in impl.goal_files if (task.repo_dir / g).is_file()]
        defined = False
        for m in masked:
            try:
                text = m.read_bytes().decode("utf-8", "replace")
                defined = defined or pyparse.find_def(pyparse.parse(text), q) is not None
            except SyntaxError:
                defined = True  # a masked file that does not parse is the stub's business, not this rule's
        if masked and not defined:
            add("F105", f"{repo}/{impl.goal_files[0]}", f"{q} is not defined in the masked goal file")
    if not impl.unit_test_files:
        add("F107", "info.json", "has no unit_test_file")
    for test in impl.unit_test_files:
        if not (task.repo_dir / test).is_file():
            add("F108", "info.json", f"unit_test_file {test!r} does not exist in {repo}/")
    if impl.category is None or not impl.category.strip():
        add("F114", "info.json", "category is empty; set one of the nine categories")
    elif impl.category_normalized is None:
        add("F111", "info.json", f"category {impl.category!r} matches none of the nine categories")
    tests = set(impl.unit_test_files)
    for ctx in impl.retrieval_context:
        if ctx in tests or Path(ctx).name.startswith(("unit_test", "test_")) or "unit_test/" in ctx:
            add("F110", "info.json", f"retrieval context {ctx!r} is a test file: it shows the model the tests")
        elif not (task.repo_dir / ctx).is_file():
            add("F109", "info.json", f"retrieval context {ctx!r} does not exist")
    return out


def _checker_findings(task: Task, impl: Implementation) -> list[Finding]:
    """T305: the checker in info.json is not the one the recorded tests were written with."""
    from pydantic import ValidationError

    from lmrbench.authoring.record.recorded_tests import default_checker
    from lmrbench.schemas.recording import RecordingIndex

    index = task.repo_dir / recording_folder(impl.index) / "index.json"
    if impl.checker is None or not index.is_file():
        return []
    try:
        recorded = RecordingIndex.model_validate_json(index.read_bytes()).checker
    except (ValidationError, ValueError, OSError):
        return []
    now = default_checker(impl)
    if now == recorded:
        return []
    rel = index.relative_to(task.path).as_posix()
    return [Finding("T305", task.name, "info.json", f"implementation {impl.index}: checker "
                    f"{_checker_text(now)} differs from {_checker_text(recorded)} the tests were recorded with "
                    f"({rel}); run `lmrbench task record` again")]


def _checker_text(c: object) -> str:
    kind = getattr(c, "kind", "?")
    if kind == "numeric":
        return f"numeric(rtol={getattr(c, 'rtol', '?')}, atol={getattr(c, 'atol', '?')})"
    if kind == "text":
        return f"text(threshold={getattr(c, 'text_threshold', '?')})"
    return str(kind)


def _leak_findings(task: Task, sel: Selection) -> list[Finding]:
    """L201, L202 (copies and near-copies), L207 (near-copies lacking the distinguishing statements), L206
    (copies in comments) and L205 (files not read) of every
    implementation at once."""
    out: list[Finding] = []
    repo = task.info.repo_folder_name
    scan = scan_task(task)
    for impl in task.info.implementations:
        for c in scan.copies.get(impl.index, []):
            tag = f"implementation {impl.index}"
            if c.score >= 1.0:
                msg = f"{tag}: holds the golden body of {c.qualname} (lines {c.start_line}-{c.end_line}, score 1.00)"
                out.append(Finding("L201", task.name, f"{repo}/{c.path}", msg, c.start_line))
            elif c.lacks:
                out.append(Finding("L207", task.name, f"{repo}/{c.path}", f"{tag}: lines {c.start_line}-"
                                   f"{c.end_line} repeat part of the golden body of {c.qualname} (score "
                                   f"{c.score:.2f}) but lack what distinguishes it: no {', '.join(c.lacks)}",
                                   c.start_line))
            else:
                out.append(Finding("L202", task.name, f"{repo}/{c.path}", f"{tag}: lines {c.start_line}-"
                                   f"{c.end_line} repeat the golden body of {c.qualname} (score {c.score:.2f})",
                                   c.start_line))
        for c in scan.commented.get(impl.index, []):
            out.append(Finding("L206", task.name, f"{repo}/{c.path}", f"implementation {impl.index}: comments on "
                               f"lines {c.start_line}-{c.end_line} hold the golden body of {c.qualname} (score "
                               f"{c.score:.2f})", c.start_line))
    if scan.skips and sel.wants("L205"):
        out.append(Finding("L205", task.name, repo, f"not scanned for copies: {scan.skips.summary()}"))
    return out


def _compiled_findings(task: Task) -> list[Finding]:
    """L203 (compiled golden code) and L204 (other compiled Python), each saying what the file holds."""
    import builtins

    pyc = compiled_files(task.repo_dir)
    if not pyc:
        return []
    impls = task.info.implementations
    goal_names = {q.split(".")[-1] for impl in impls for q in impl.qualnames}
    goal_stems = {Path(g).stem for impl in impls for g in impl.goal_files}
    golden_stems = {Path(g).stem for impl in impls
                    for g in ([impl.golden_file] if isinstance(impl.golden_file, str) else impl.golden_file or [])}
    masked = " ".join(p.read_text(errors="replace") for impl in impls
                      for g in impl.goal_files if (p := task.repo_dir / g).is_file())
    golden_only = {n for impl in impls for body in golden_bodies(task, impl).values()
                   for n in nearcopy.kept_names(nearcopy.tokenize(body).words)
                   if len(n) >= 4 and n not in masked and not hasattr(builtins, n)}
    out = []
    other = []
    repo = task.info.repo_folder_name
    for rel in pyc:
        module = Path(rel).name.split(".")[0]
        goals, only = pyc_contents(task.repo_dir / rel, goal_names, golden_only)
        holds = f"holds {', '.join(goals)}" if goals else "holds no goal function name"
        if module in golden_stems or module.endswith("_golden"):
            out.append(Finding("L203", task.name, f"{repo}/{rel}", f"compiled golden file {module}: {holds}; "
                               "delete it"))
        elif module in goal_stems and only:
            out.append(Finding("L203", task.name, f"{repo}/{rel}", f"compiled goal module {module}: {holds} and "
                               f"names only the golden body uses ({', '.join(only[:4])}); delete it"))
        elif goals:
            out.append(Finding("L204", task.name, f"{repo}/{rel}", f"compiled {module}: {holds}, but no name only "
                               "the golden body uses; delete it"))
        else:
            other.append(rel)
    if other:
        more = f" and {len(other) - 3} more" if len(other) > 3 else ""
        out.append(Finding("L204", task.name, f"{repo}/{other[0]}", f"{len(other)} compiled Python file(s) "
                           f"({', '.join(other[:3])}{more}) hold no golden name; delete them anyway"))
    return out


def _dir_default_findings(task: Task, text: str) -> list[Finding]:
    """D404: the Dockerfile's ``ARG DIR`` default is not the task's repository folder."""
    m = re.search(r"^\s*ARG\s+DIR\s*=\s*(\S+)", text, re.MULTILINE)
    if not m:
        return []
    value = m.group(1).strip("\"'")
    if value.startswith("/") or value.strip("/") == task.info.repo_folder_name:
        return []
    return [Finding("D404", task.name, "Dockerfile", f"ARG DIR defaults to {value!r}, not the repository folder "
                    f"{task.info.repo_folder_name!r}: a build without --build-arg DIR fails; set the default")]


def _is_empty(folder: Path) -> bool:
    return not folder.is_dir() or not any(folder.iterdir())


def task_findings(task: Task, sel: Selection = ALL) -> list[Finding]:
    """Every finding of one task that ``sel`` selects; checks whose codes are all left out do not run."""
    from lmrbench.authoring.check import taskdata
    from lmrbench.authoring.check.dockerfile import DOCKERFILE, dockerfile_findings
    from lmrbench.authoring.check.goalcode import goal_code_findings
    from lmrbench.authoring.check.testlint import test_findings
    from lmrbench.authoring.check.testsmells import smell_findings

    out: list[Finding] = []
    dockerfile = task.path / DOCKERFILE
    if sel.wants("D"):
        if dockerfile.is_file():
            text = dockerfile.read_text(errors="replace")
            out += dockerfile_findings(text, task.name) + _dir_default_findings(task, text)
        else:
            out.append(Finding("D401", task.name, DOCKERFILE, "missing; the task cannot be built in Docker"))
    if sel.wants("F112"):
        out += [Finding("F112", task.name, link, "is a symlink that leads out of the task folder")
                for link in escaping_symlinks(task.path)]
    if _is_empty(task.repo_dir):
        out.append(Finding("F115", task.name, task.info.repo_folder_name, "the repository folder is empty: a git "
                           "submodule that was never checked out; run `git submodule update --init` and copy it"))
        return sel.keep(out)
    if sel.wants("F113"):
        out += taskdata.lfs_findings(task)
    if sel.wants("L203", "L204"):
        out += _compiled_findings(task)
    if sel.wants("L201", "L202", "L205", "L206", "L207"):
        out += _leak_findings(task, sel)
    for impl in task.info.implementations:
        if sel.wants("F1"):
            out += _file_findings(task, impl)
        if sel.wants("T301", "T302", "T303", "T304"):
            out += test_findings(task, impl)
        if sel.wants("T305"):
            out += _checker_findings(task, impl)
        if sel.wants("T306", "T307", "T308", "T309", "T310", "T311"):
            out += smell_findings(task, impl)
        if sel.wants("F117", "T313", "T314"):
            out += goal_code_findings(task, impl)
        if sel.wants("F116"):
            out += taskdata.untrusted_data_findings(task, impl)
        if sel.wants("F118"):
            out += taskdata.missing_data_findings(task, impl)
        if sel.wants("T312"):
            out += taskdata.unvaried_findings(task, impl)
    return sel.keep(out)


def leak_findings(task: Task) -> list[Finding]:
    """The L2xx findings of a task: copies and near-copies of its golden bodies, compiled Python."""
    return task_findings(task, Selection(["L"], ["L205"]))


def check_task(task: Task) -> list[str]:
    """Every problem of one task as a one-line string naming the file; empty when the task is clean.

    Notes (conventions of lmrbench that a foreign task need not follow) are left out.
    """
    from lmrbench.authoring.check.findings import Severity

    return [f"{task.path / f.path if f.path else task.path}{':' + str(f.line) if f.line else ''}: "
            f"{f.code} {f.message}" for f in task_findings(task) if f.severity > Severity.NOTE]


def check_taskset(bench: Path) -> list[tuple[str, list[str]]]:
    """(task name, problems) for every task of a set; a task that does not load is one problem line."""
    tasks, errors = load_taskset(bench)
    out: list[tuple[str, list[str]]] = [(t.name, check_task(t)) for t in tasks]
    for err in errors:
        name = Path(err.path).parent.name if err.path else "?"
        out.append((name, [str(err)]))
    return sorted(out, key=lambda item: item[0])


__all__ = ["MIN_LEAK_LINES", "LmrError", "check_task", "check_taskset", "find_copies", "find_leaks",
           "golden_bodies", "golden_body_lines", "task_findings"]
