"""What stops an implementation before its golden code runs, named with its fix.

Such an implementation is "not run": neither valid nor invalid, and left out of the golden pass rate. The causes:
Git LFS pointers that a test or the golden code reads, an empty or missing repository folder (a git submodule
never checked out), no unit tests, a FROM image that cannot be had, a requirement that cannot be resolved, and a
value the codec cannot carry across a split run; and, read from a failed golden run's output
(``validation.stopped``), an import that fails, a data file that is missing, a GPU or a download the tests need.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

from lmrbench.benchmark.validation.stopped import run_stopped
from lmrbench.core.datareads import git_ignored, missing_data
from lmrbench.core.taskset import STATE_DIRS, Task
from lmrbench.core.testfiles import read_unit_tests
from lmrbench.core.trust import impl_test_files
from lmrbench.fsutil import holds_no_file, lfs_pointers
from lmrbench.runtime.lmrbench_protocol import UNCARRIED, UNREADABLE
from lmrbench.schemas.task_info import Implementation, TaskInfo
from lmrbench.schemas.testrun import TestReport
from lmrbench.schemas.validation import NOT_RUN_LABELS, NotRun, SummaryRow

_LFS_FIX = "run `git lfs pull` where the task set was cloned (or copy the files' content into the task)"
_UNPICKLED_POINTER = "invalid load key, 'v'"
"""What pickle and torch.load say of a Git LFS pointer file ('version https://git-lfs...')."""
_NUMPY_ABI = ("Failed to initialize NumPy", "Numpy is not available")
"""What torch says (a warning at its first use of numpy; the error of each conversion after it) when the numpy
installed beside it has another major version than the one its wheels were built against."""
_NUMPY_RUN_IN = re.compile(r"cannot be run in\s+NumPy (\d+\.\d+\.\d+)")


def missing_repository(info: TaskInfo, task_dir: Path) -> NotRun:
    """The repository folder is empty or missing: a git submodule that was never checked out."""
    name = info.repo_folder_name
    url = _submodule_url(task_dir / name)
    state = "is empty" if (task_dir / name).is_dir() else "is missing"
    return NotRun(cause="empty_repo", detail=f"{task_dir.name}/{name} {state}: a git submodule never checked out"
                  + (f" ({url})" if url else ""),
                  fix=f"run `git submodule update --init {task_dir.name}/{name}` where the task set was cloned "
                      "(or copy the repository into the folder)")


def _submodule_url(folder: Path) -> str:
    """The url a ``.gitmodules`` above ``folder`` gives its path ('' when none names it)."""
    for root in list(folder.parents)[:4]:
        modules = root / ".gitmodules"
        if not modules.is_file():
            continue
        rel = folder.relative_to(root).as_posix()
        text = modules.read_text(encoding="utf-8", errors="replace")
        for block in text.split("[submodule")[1:]:
            path = re.search(r"^\s*path\s*=\s*(.+?)\s*$", block, re.MULTILINE)
            url = re.search(r"^\s*url\s*=\s*(.+?)\s*$", block, re.MULTILINE)
            if path and path.group(1) == rel:
                return url.group(1) if url else ""
    return ""


def static_not_run(task: Task, impl: Implementation) -> NotRun | None:
    """What stops the implementation before anything runs: an empty repository folder, no unit tests, Git LFS
    pointers its tests or golden code read; None when nothing does."""
    if holds_no_file(task.repo_dir):
        return missing_repository(task.info, task.path)
    if not impl_test_files(task, impl):
        return NotRun(cause="no_tests", detail=f"no unit test file ({', '.join(impl.unit_test_files) or 'none'} "
                      "declared)", fix=f"record tests: `lmrbench task record {task.path} --impl {impl.index} "
                      "-- <command that calls the function>`, or write unit_test/unit_test_<k>.py")
    read = read_pointers(task, impl)
    if read:
        shown = ", ".join(read[:3]) + (f" and {len(read) - 3} more" if len(read) > 3 else "")
        return NotRun(cause="lfs", detail=f"{len(read)} Git LFS pointer file(s) the tests or the golden code read, "
                      f"not their content ({shown})", fix=_LFS_FIX)
    return None


def read_pointers(task: Task, impl: Implementation) -> list[str]:
    """The task's Git LFS pointer files (task-relative) that the implementation's tests or golden code read: those
    whose name, or its stem less a trailing number and then the suffix (``f"seed{seed}.pt"``), the tests or the
    golden file spell. (On the official set this names at least one pointer of every implementation that reads
    any; one read through a name built otherwise stops the golden run, and ``golden_not_run`` names it.)"""
    pointers = lfs_pointers(task.path, skip=frozenset({".git", *STATE_DIRS}))
    if not pointers:
        return []
    tests = impl_test_files(task, impl)
    texts = [(task.repo_dir / f).read_text(encoding="utf-8", errors="replace") for f in tests]
    for which in range(len(impl.goal_files)):
        try:
            texts.append(task.golden_path(impl, which).read_text(encoding="utf-8", errors="replace"))
        except OSError:
            continue
    text = "\n".join(texts)
    out = []
    for p in pointers:
        stem = re.sub(r"[\d_.-]+$", "", p.stem)  # test_data_seed42.pt -> test_data_seed (f"..._seed{seed}.pt")
        spelled = len(stem) >= 4 and re.search(re.escape(stem) + r"[^\s'\"]{0,40}" + re.escape(p.suffix), text)
        if p.name in text or spelled:
            out.append(p.as_posix())
    return out


def environment_not_run(message: str, cause: str) -> NotRun:
    """An environment that could not be had: a FROM image, a requirement, or another cause."""
    kind = cause if cause in ("image", "requirement") else "environment"
    text, _, fix = message.partition("; fix: ")
    if not fix:
        fix = {"image": "pull the image where a registry answers, or `lmrbench image dockerfile TASK --force`",
               "requirement": "pin a version that exists for the image's Python in the task's requirements "
                              "(`lmrbench task record -v` shows pip's whole output)"}.get(kind, "")
    return NotRun(cause=kind, detail=text, fix=fix)  # type: ignore[arg-type]


def with_missing_data(task: Task, impl: Implementation, not_run: NotRun) -> NotRun:
    """``not_run`` (an environment that could not be had) with the data its tests read by a whole name that exist
    nowhere in the task (``core.datareads.missing_data``, `task check` F118) added: whatever the environment,
    those stop the golden code too, and the row says so before anyone builds an image to find out."""
    missing = sorted({rel for tf in read_unit_tests(task, impl) for rel in missing_data(task, impl, tf)})
    if not missing:
        return not_run
    shown = ", ".join(missing[:3]) + (f" and {len(missing) - 3} more" if len(missing) > 3 else "")
    ignored = sorted({line for rel in missing if (line := git_ignored(task.repo_dir, rel))})
    why = f" (the repository's .gitignore ignores {', '.join(map(repr, ignored))}: never committed)" if ignored else ""
    return NotRun(cause=not_run.cause, detail=f"{not_run.detail}; and the tests read {shown}, which exist nowhere "
                  f"in the task{why}", fix=f"{not_run.fix}; and copy the missing data into the task from where it "
                  "was made, or record the tests again (`task check` F118)")


def golden_not_run(task: Task, impl: Implementation, reports: list[TestReport]) -> NotRun | None:
    """A failed golden run that never reached the golden code: a value the codec cannot carry across a split run,
    a Git LFS pointer the tests read in place of data, or what :func:`run_stopped` reads in its output (an
    import, a data file, a GPU, a download); None for a real failure (the golden code ran and answered wrong)."""
    failed = [r for r in reports if not r.passed]
    if not failed:
        return None
    texts = [r.log or r.log_tail for r in failed] + [c.message for r in failed for c in r.cases]
    if any(mark in t for t in texts for mark in _NUMPY_ABI):
        return numpy_abi_not_run(texts)
    for text in texts:
        if UNREADABLE in text:
            line = next(x for x in text.splitlines() if UNREADABLE in x)
            what = line.split("the candidate's reply to ", 1)[-1].strip()
            call, _, error = what.partition(f" {UNREADABLE}: ")
            return NotRun(cause="codec", detail=f"the golden code's reply to {call} cannot be read back by the codec "
                          f"({error or what})"[:300],
                          fix="give the value a form the codec carries (see docs/recording.md), or set "
                              f'"isolation": "shared" in implementations[{impl.index}] of info.json (weaker)')
        if UNCARRIED in text:
            line = next(x for x in text.splitlines() if UNCARRIED in x)
            value = line.split(f": this call {UNCARRIED}", 1)[0].split("Error: ", 1)[-1].strip()
            return NotRun(cause="codec", detail=value[:300],
                          fix="give the value a form the codec carries (see docs/recording.md), or set "
                              f'"isolation": "shared" in implementations[{impl.index}] of info.json (weaker)')
    if any(_UNPICKLED_POINTER in t for t in texts):
        pointers = [p.as_posix() for p in lfs_pointers(task.path, skip=frozenset({".git", *STATE_DIRS}))]
        if pointers:
            return NotRun(cause="lfs", detail=f"the tests read a Git LFS pointer file in place of data "
                          f"({len(pointers)} in the task: {', '.join(pointers[:3])})", fix=_LFS_FIX)
    return run_stopped(task, texts)


def numpy_abi_not_run(texts: list[str]) -> NotRun:
    """torch could not use numpy in the run (``_NUMPY_ABI``): the environment, not the codec or the golden code."""
    fix = ("pin numpy<2 beside a torch below 2.3 in the task's requirements, or leave torch unpinned (a newer torch "
           "is built against NumPy 2)")
    if not any(m in t for t in texts for m in ("Failed to initialize NumPy", "_ARRAY_API", "compiled using NumPy")):
        return NotRun(cause="environment", detail="torch cannot use numpy (\"Numpy is not available\"): numpy is "
                      "not installed beside it, or its major version is not the one torch was built against",
                      fix=f"add numpy to the task's requirements; {fix}")
    found = next((m.group(1) for t in texts if (m := _NUMPY_RUN_IN.search(t))), "")
    numpy = f"numpy {found}" if found else "the installed numpy"
    return NotRun(cause="environment",
                  detail=f"torch failed to initialise NumPy: {numpy}'s major version is not the one torch was built "
                         "against (torch below 2.3 was built against NumPy 1), so no tensor converts to an array",
                  fix=fix)


def not_run_counts(rows: list[SummaryRow]) -> str:
    """``23 LFS pointers the tests read, 4 empty submodules``: the rows not run, counted by cause."""
    counts = Counter(r.not_run.cause for r in rows if r.not_run is not None)
    return ", ".join(f"{n} {NOT_RUN_LABELS[cause]}" for cause, n in counts.most_common())
