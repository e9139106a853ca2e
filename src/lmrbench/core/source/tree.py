"""Build the trees a run sees: the pristine masked repository with one variant's goal functions in it.

A variant is ``"golden"`` (the bodies from golden_files), ``"masked"`` (the task as shipped) or a candidate
folder shaped like the repository (or like the task folder holding it). From a candidate only its goal file's
goal functions and the new imports, helpers and constants they need are taken (``splice_candidate`` into the
pristine masked goal file); every other file it holds is ignored, and the trusted files (unit tests and
recorded data) are copied from the task last.
"""

from __future__ import annotations

import functools
import shutil
from pathlib import Path, PurePosixPath
from typing import Literal

from lmrbench.core.datareads import withheld_paths
from lmrbench.core.source.candidate_splice import splice_candidate
from lmrbench.core.source.index import index_source
from lmrbench.core.source.splice import splice_bodies
from lmrbench.core.taskset import Task
from lmrbench.core.treeview import TreeView, skipped
from lmrbench.core.trust import trusted_paths
from lmrbench.defaults import UNIT_TEST_DIR
from lmrbench.errors import LmrError
from lmrbench.fsutil import links_leaving, read_capped
from lmrbench.pyparse import decode_source, encode_source
from lmrbench.schemas.task_info import Implementation

Variant = Literal["golden", "masked"] | Path | dict[str, str]
"""What fills the goal functions: the golden code, the masked stubs, a candidate folder, or goal files given as
data (repository-relative path -> source: a mutant, or a candidate's files already read with
``read_untrusted_goal_file``)."""

MAX_SOURCE_BYTES = 2_000_000
"""Largest candidate goal file read."""


def read_source(path: Path, shown: str | Path) -> str:
    """A Python source file's text, read capped (``MAX_SOURCE_BYTES``, links refused) and decoded as Python
    decodes it (UTF-8, or the encoding of a PEP 263 coding line); LmrError naming ``shown`` when it cannot be
    read or decoded."""
    raw = read_capped(path, MAX_SOURCE_BYTES, shown=shown)
    try:
        return decode_source(raw)
    except UnicodeDecodeError as exc:
        said = "UTF-8" if exc.encoding.startswith("utf") else f"{exc.encoding} as its coding line says"
        raise LmrError(f"not {said} (byte {exc.start})", shown) from None
    except SyntaxError as exc:
        raise LmrError(f"cannot be decoded: {exc.msg}", shown) from None


def _candidate_repo(task: Task, folder: Path) -> Path:
    """The repository folder of a candidate given as a repo-shaped folder or a task-shaped one."""
    folder = Path(folder)
    if not folder.is_dir():
        raise LmrError("candidate is not a folder", folder)
    inner = folder / task.info.repo_folder_name
    return inner if inner.is_dir() and not inner.is_symlink() else folder


def read_untrusted_goal_file(cand_repo: Path, goal_file: str) -> str:
    """A goal file written by a model or agent: refuses links (the file or a folder on its way), missing,
    oversized (checked before reading) and undecodable files (UTF-8 unless a PEP 263 coding line says
    otherwise)."""
    path = cand_repo / goal_file
    cur = cand_repo
    for part in PurePosixPath(goal_file).parts:
        cur = cur / part
        if cur.is_symlink():
            raise LmrError("is a symbolic link; a goal file must be a regular file", path)
    if not path.is_file():
        raise LmrError("no such goal file in the candidate's folder", path)
    return read_source(path, path)


def check_contained(task: Task) -> None:
    """LmrError unless the task is closed: no link in it leaves the task folder, and no goal file, golden file
    or test file is a link (writing a spliced goal file must never write through one)."""
    leaving = links_leaving(task.path)
    if leaving:
        raise LmrError(f"a symbolic link leaves the task folder: {leaving[0].relative_to(task.path)}", leaving[0])
    for impl in task.info.implementations:
        paths = [task.goal_path(impl, k) for k in range(len(impl.goal_files))]
        paths += [task.golden_path(impl, k) for k in range(len(impl.goal_files))]
        paths += [task.repo_dir / f for f in impl.unit_test_files]
        for path in paths:
            cur = path
            while cur != task.path and task.path in cur.parents:
                if cur.is_symlink():
                    raise LmrError("is a symbolic link; goal, golden and test files must be regular files", cur)
                cur = cur.parent


def _ignore(folder: str, names: list[str]) -> set[str]:
    """Caches and compiled files: a stray .pyc may hold the golden code's names and constants."""
    return {n for n in names if skipped(n)}


def _functions_in(source: str, wanted: list[str], file: str) -> list[str]:
    """The names of ``wanted`` defined in ``source`` (all when none is: splice then says so)."""
    defined = {f.qualname for f in index_source(source, file)}
    present = [q for q in wanted if q in defined]
    return present or wanted


def goal_plan(task: Task, impl: Implementation) -> list[tuple[str, list[str]]]:
    """(goal file, the goal functions it holds) for each goal file of ``impl``, in info.json's order: the one
    pairing of files and functions that prompts, recording, trees and the split run's proxy all use.

    One goal file holds every goal function. Several files pair one to one with as many functions; otherwise
    each file holds the goal functions its golden version defines."""
    names = impl.qualnames
    if not names:
        raise LmrError(f"implementation {impl.index} names no goal function", task.path / "info.json")
    plan = []
    files = impl.goal_files
    for which, goal in enumerate(files):
        if len(files) > 1 and len(files) == len(names):
            quals = [names[which]]
        elif len(files) > 1:
            src = read_source(task.golden_path(impl, which), task.golden_path(impl, which))
            quals = _functions_in(src, names, goal)
        else:
            quals = names
        plan.append((goal, quals))
    return plan


def build_tree(task: Task, impl_indexes: list[int] | None, variant: Variant, dest: Path) -> Path:
    """Write the evaluated repository to ``dest`` (which must not exist) and return it.

    The goal functions of the implementations in ``impl_indexes`` (all when None) come from ``variant``; the
    other implementations stay masked. Raises LmrError when the variant cannot be spliced (a candidate without
    the goal function, a syntax error), naming the file.
    """
    dest = Path(dest)
    if dest.exists():
        raise LmrError("destination of the evaluated tree already exists", dest)
    check_contained(task)
    impls = task.info.implementations
    chosen = impls if impl_indexes is None else [task.info.implementation(i) for i in impl_indexes]
    shutil.copytree(task.repo_dir, dest, symlinks=True, ignore=_ignore)
    for goal, text in _spliced_goals(task, chosen, variant).items():
        (dest / goal).write_bytes(text)
    goal_files = {PurePosixPath(g).as_posix() for impl in chosen for g, _ in goal_plan(task, impl)}
    _overlay_trusted(task, dest, goal_files)
    return dest


def _spliced_goals(task: Task, chosen: list[Implementation], variant: Variant) -> dict[str, bytes]:
    """The goal files of ``chosen`` with ``variant``'s functions spliced into the task's (masked) ones, by
    repository-relative POSIX path; none for the masked variant."""
    if variant == "masked":
        return {}
    cand_repo = _candidate_repo(task, variant) if isinstance(variant, Path) else None
    given = variant if isinstance(variant, dict) else None
    out: dict[str, bytes] = {}
    for impl in chosen:
        for which, (goal, quals) in enumerate(goal_plan(task, impl)):
            rel = PurePosixPath(goal).as_posix()
            if rel in out:  # a goal file shared by several implementations: spliced once for each
                target = decode_source(out[rel])
            else:
                target = read_source(task.repo_dir / goal, task.goal_path(impl, which))
            if given is not None:
                if goal not in given:
                    raise LmrError("the variant has no such goal file", goal)
                new = splice_candidate(target, given[goal], quals, file=goal, donor_file=goal).source
            elif cand_repo is None:
                golden = task.golden_path(impl, which)
                new = _splice_golden(target, read_source(golden, golden), tuple(quals), goal)
            else:
                donor = read_untrusted_goal_file(cand_repo, goal)
                new = splice_candidate(target, donor, quals, file=goal, donor_file=str(cand_repo / goal)).source
            try:
                out[rel] = encode_source(new)
            except UnicodeEncodeError as exc:
                raise LmrError(f"holds a character its coding line's {exc.encoding} cannot write", goal) from None
    return out


@functools.lru_cache(maxsize=32)
def _splice_golden(target: str, golden: str, quals: tuple[str, ...], file: str) -> str:
    """``splice_bodies`` of the golden code, kept: validation runs the golden variant several times."""
    return splice_bodies(target, golden, list(quals), file=file)


def _overlay_trusted(task: Task, dest: Path, goal_files: set[str]) -> None:
    """Copy the trusted files from the task over ``dest`` and drop stale legacy log folders."""
    for rel in trusted_paths(task):
        if rel in goal_files:
            continue
        src, dst = task.repo_dir / rel, dest / rel
        if dst.is_symlink() or dst.is_file():
            dst.unlink()
        elif dst.is_dir():
            shutil.rmtree(dst)
        if src.is_dir() and not src.is_symlink():
            shutil.copytree(src, dst, symlinks=True, ignore=_ignore)
        elif src.exists() or src.is_symlink():
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dst, follow_symlinks=False)
    for logs in (dest / UNIT_TEST_DIR).glob("**/logs"):
        if logs.is_dir() and not logs.is_symlink():
            shutil.rmtree(logs)




def candidate_view(task: Task, impl_indexes: list[int] | None, variant: Variant) -> TreeView:
    """The candidate's view of a split run: the task's repository with ``variant``'s goal functions spliced
    in (as ``build_tree``) and without any trusted path (tests, recorded data, their checkers) nor any data
    the tests read (``core.datareads.withheld_paths``, listed in info.json or not), so that nothing the tests
    compare with is there to read. Read in place: nothing is copied."""
    check_contained(task)
    impls = task.info.implementations
    chosen = impls if impl_indexes is None else [task.info.implementation(i) for i in impl_indexes]
    files = _spliced_goals(task, chosen, variant)
    goal_files = {PurePosixPath(g).as_posix() for i in impls for g in i.goal_files}
    return TreeView(task.repo_dir, drop=frozenset(set(withheld_paths(task)) - goal_files), files=files)


def trusted_view(task: Task) -> TreeView:
    """The trusted view of a split run: the task's pristine masked repository, tests and data included,
    without the logs official scripts leave behind. Read in place: nothing is copied."""
    check_contained(task)
    logs = [
        p.relative_to(task.repo_dir).as_posix()
        for p in (task.repo_dir / UNIT_TEST_DIR).glob("**/logs")
        if p.is_dir() and not p.is_symlink()
    ]
    return TreeView(task.repo_dir, drop=frozenset(logs))
