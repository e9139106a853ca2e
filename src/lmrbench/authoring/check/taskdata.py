"""What a task's tests read and vary (F113, F116, T312), read from the files on disk.

- F113: Git LFS pointer files stand where data should be (the repository was copied without ``git lfs pull``);
- F116: tests read recorded data outside ``unit_test/`` (``tensors/``, the repository root) that info.json's
  trusted paths do not cover (``core.trust.trusted_paths``); what they read is found by
  :mod:`lmrbench.core.datareads`, the reader the grader's candidate view and ``export-agent`` withhold by too,
  so the finding is about info.json, which other graders read;
- F118: tests read data files (named whole) that exist nowhere in the task, with the ``.gitignore`` line that
  kept them out of the repository (01-DPO's ``tensors/``);
- T312: a parameter of the goal function that no test varies (every recorded case, or every call in the tests,
  leaves it at one value), so a candidate that ignores it passes.
"""

from __future__ import annotations

import ast
import re

from pydantic import ValidationError

from lmrbench import pyparse
from lmrbench.authoring.check.findings import Finding
from lmrbench.authoring.check.scanfiles import walk_files
from lmrbench.core.datareads import git_ignored, missing_data, outside_data
from lmrbench.core.taskset import Task
from lmrbench.core.testfiles import UnitTestFile, call_name, read_unit_tests
from lmrbench.core.trust import TRUSTED_KEY, is_trusted, trusted_paths
from lmrbench.defaults import recording_folder
from lmrbench.fsutil import is_lfs_pointer
from lmrbench.schemas.task_info import Implementation

_SHOWN = 3
_SCALAR = re.compile(r"^(-?[\d.eE+-]+|True|False|None|'.*'|\".*\")$")


def _listing(items: list[str]) -> str:
    more = f" and {len(items) - _SHOWN} more" if len(items) > _SHOWN else ""
    return ", ".join(items[:_SHOWN]) + more


def lfs_findings(task: Task) -> list[Finding]:
    """F113: one finding for the Git LFS pointers of a task, naming the first few."""
    pointers = [p.relative_to(task.path).as_posix() for p in walk_files(task.path)
                if is_lfs_pointer(p)]
    if not pointers:
        return []
    return [Finding("F113", task.name, pointers[0], f"{len(pointers)} file(s) are Git LFS pointers, not data "
                    f"({_listing(pointers)}): tests that read them fail; fetch them with `git lfs pull` and copy "
                    "the real files")]


def untrusted_reads(task: Task, impl: Implementation) -> dict[str, list[str]]:
    """{test file (relative to the task folder): the data it reads outside ``unit_test/`` that no trusted path
    covers}, read statically; ``core.trust.trusted_paths`` is the grader's own list, so what this names is what a
    candidate's view (and an agent export) would hold. Folders end in ``/``."""
    trusted = trusted_paths(task)
    out: dict[str, list[str]] = {}
    for tf in read_unit_tests(task, impl):
        found = sorted(p for p in outside_data(task, impl, tf) if not is_trusted(p, trusted))
        if found:
            out[tf.where] = found
    return out


def untrusted_data_findings(task: Task, impl: Implementation) -> list[Finding]:
    """F116: data the tests read outside ``unit_test/`` that no trusted path covers (:func:`untrusted_reads`)."""
    out = []
    for where, found in untrusted_reads(task, impl).items():
        if found:
            out.append(Finding("F116", task.name, where, f"implementation {impl.index}: reads recorded data "
                               f"outside unit_test/ ({_listing(found)}) that info.json does not list as trusted: "
                               "lmrbench's grader and export-agent withhold it (read here the same way), but a "
                               "grader that reads info.json alone shows it to the candidate; list it in "
                               f"implementation {impl.index}'s {TRUSTED_KEY} (validate does)"))
    return out


def missing_data_findings(task: Task, impl: Implementation) -> list[Finding]:
    """F118: data files a test reads by a whole name that exist nowhere in the task (``core.datareads``), with
    the ``.gitignore`` line that kept them out of the repository when there is one."""
    out = []
    for tf in read_unit_tests(task, impl):
        missing = missing_data(task, impl, tf)
        if not missing:
            continue
        ignored = {rel: line for rel in missing if (line := git_ignored(task.repo_dir, rel))}
        why = ""
        if ignored:
            which = "them" if len(ignored) == len(missing) else _listing(sorted(ignored))
            lines = ", ".join(repr(x) for x in sorted(set(ignored.values())))
            why = f"; the repository's .gitignore ignores {which} ({lines}), so they were never committed"
        out.append(Finding("F118", task.name, tf.where, f"implementation {impl.index}: reads {_listing(missing)}, "
                           f"which exist{'s' if len(missing) == 1 else ''} nowhere in the task: the golden code "
                           f"cannot pass{why}; copy them in from where they were made, or record the tests again"))
    return out


def _parameters(task: Task, impl: Implementation) -> dict[str, dict[str, bool]]:
    """qualname -> {parameter: has a default} from the golden file."""
    out: dict[str, dict[str, bool]] = {}
    try:
        tree = pyparse.parse(task.golden_path(impl).read_bytes().decode("utf-8", "replace"))
    except (OSError, SyntaxError, IndexError, TypeError):
        return out
    for q in impl.qualnames:
        node = pyparse.find_def(tree, q)
        if node is None:
            continue
        a = node.args
        pos = [*a.posonlyargs, *a.args]
        defaults = {p.arg for p in pos[len(pos) - len(a.defaults):]} if a.defaults else set()
        defaults |= {k.arg for k, d in zip(a.kwonlyargs, a.kw_defaults, strict=True) if d is not None}
        params = {p.arg: p.arg in defaults for p in [*pos, *a.kwonlyargs] if p.arg not in ("self", "cls")}
        out[q] = params
    return out


def _recorded_unvaried(task: Task, impl: Implementation, params: dict[str, bool]) -> list[str] | None:
    from lmrbench.schemas.recording import RecordingIndex

    index = task.repo_dir / recording_folder(impl.index) / "index.json"
    if not index.is_file():
        return None
    try:
        cases = RecordingIndex.model_validate_json(index.read_bytes()).cases
    except (ValidationError, ValueError, OSError):
        return None
    if len(cases) < 2:
        return None
    out = []
    for p in params:
        values = {c.arguments.get(p, "<default>") for c in cases}
        if len(values) == 1 and (v := next(iter(values))) is not None and (v == "<default>" or _SCALAR.match(v)):
            out.append(p)
    return out


def _called_unvaried(tests: list[UnitTestFile], goal: str, params: dict[str, bool]) -> list[str] | None:
    calls = [n for tf in tests for n in ast.walk(tf.tree) if isinstance(n, ast.Call) and call_name(n) == goal]
    if not calls or any(any(isinstance(a, ast.Starred) for a in c.args) or any(k.arg is None for k in c.keywords)
                        for c in calls):
        return None
    names = list(params)
    passed = set()
    for c in calls:
        passed |= {k.arg for k in c.keywords if k.arg}
        passed |= set(names[: len(c.args)])
    return [p for p, has_default in params.items() if has_default and p not in passed]


def _recording_says_unvaried(task: Task, impl: Implementation) -> dict[str, str] | None:
    """The parameters the recording itself found no case varying (``unvaried`` in its index.json, written by
    ``task record`` after amplification), each with what the recording tried ("" when it says nothing), or
    None when there is no such recording."""
    from pydantic import ValidationError

    from lmrbench.defaults import recording_folder
    from lmrbench.schemas.recording import RecordingIndex

    index = task.repo_dir / recording_folder(impl.index) / "index.json"
    try:
        if not index.is_file():
            return None
        found = RecordingIndex.model_validate_json(index.read_bytes())
    except (ValidationError, ValueError, OSError):
        return None
    tried = {}
    for p in found.unvaried:
        said = [ln.split(": ", 1)[1] for ln in found.selection if ln.startswith(f"no test varies {p}: ")]
        tried[p] = said[0] if said else ""
    return tried


def shape_tied(task: Task, impl: Implementation, names: list[str]) -> set[str]:
    """Of ``names`` (parameters, ``self.<attr>``), those whose recorded value is an int above 1 that equals a
    dimension of an input array (an argument or an attribute) of the same call in every recorded case
    (``n_heads``, ``self.num_classes``): tied to the arrays' shapes, so no case can vary it alone, and naming it
    as unvaried helps no one."""
    from lmrbench.authoring.record.amplify import tied_to_shapes
    from lmrbench.schemas.recording import RecordingIndex

    folder = task.repo_dir / recording_folder(impl.index)
    try:
        paths = [folder / c.file for c in RecordingIndex.model_validate_json(
            (folder / "index.json").read_bytes()).cases]
    except (ValidationError, ValueError, OSError):
        return set()
    return tied_to_shapes(paths, names)


def _unvaried_text(fixed: list[str], tried: dict[str, str]) -> str:
    """What T312 says of the parameters no test varies: what the recording tried, or that ignoring passes."""
    said = [f"{p} ({tried[p]})" for p in fixed if tried.get(p)]
    if said:
        return "; ".join(said) + ("" if len(said) == len(fixed) else ", and " + ", ".join(
            p for p in fixed if not tried.get(p)) + ": a candidate that ignores them may pass")
    return f"a candidate that ignores {'it' if len(fixed) == 1 else 'them'} passes"


def unvaried_findings(task: Task, impl: Implementation) -> list[Finding]:
    """T312: parameters of a goal function no test varies (the instruction's "you may ignore" ones left out)."""
    out = []
    instruction = (impl.instruction or "").lower()
    tests: list[UnitTestFile] | None = None
    said = _recording_says_unvaried(task, impl)
    for q, params in _parameters(task, impl).items():
        extra = [p for p in said or {} if p.startswith("self.")]
        fixed = [p for p in [*params, *extra] if p in said] if said is not None \
            else _recorded_unvaried(task, impl, params)
        if fixed is None:
            tests = read_unit_tests(task, impl) if tests is None else tests
            fixed = _called_unvaried(tests, q.split(".")[-1], params)
        fixed = [p for p in fixed or [] if not ("ignore" in instruction and p.lower() in instruction)]
        fixed = [p for p in fixed if p not in shape_tied(task, impl, fixed)] if said is not None else fixed
        if fixed:
            where = f"{task.info.repo_folder_name}/{impl.unit_test_files[0]}" if impl.unit_test_files else "info.json"
            out.append(Finding("T312", task.name, where, f"implementation {impl.index}: no test varies "
                               f"{', '.join(fixed)} of {q}: {_unvaried_text(fixed, said or {})}"))
    return out

