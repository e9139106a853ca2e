"""Hand tasks to an agent and take its work back as candidates.

``export_agent`` writes, per task, only what an agent may see: the masked repository (paper.pdf and paper.json
included) without unit tests, recorded data, trusted files or version-control history, and a TASK.md prompt
with the instructions. Data the tests read outside ``unit_test/`` that no trusted path covers yet (a task not
validated since its tests changed) is withheld too, with a warning. Golden files and info.json are never
copied, and the export does not name the task set's location. ``import_agent`` reads the agent's edited goal
files and splices their goal functions, with the new imports, helpers and constants beside them
(``splice_candidate``), into the pristine masked files, as candidates of a run; it grades every task it is
given, and a task the agent's folder lacks is a wrong answer.

Under an input setting other than ``full`` (see benchmark.context) the repository folder holds only the paper
and the goal file(s), or the paper and stubs of the goal functions. What was exported (the setting, the tasks,
a digest of each) is recorded on the host (``exports``); ``import_agent`` takes the setting from there, never
from the agent's folder, and writes it and the record into run.json.
"""

from __future__ import annotations

import shutil
import threading
from pathlib import Path, PurePosixPath

from lmrbench import __version__
from lmrbench.benchmark.pipeline.context import CONTEXT_KEY, ContextSetting, check_context, goal_stub
from lmrbench.benchmark.pipeline.exports import EXPORT_JSON, host_record, keep_record, new_record
from lmrbench.benchmark.pipeline.generate import write_candidate
from lmrbench.benchmark.pipeline.manifest import finish_manifest, start_manifest
from lmrbench.benchmark.pipeline.rundir import RunDir, save_model
from lmrbench.benchmark.pipeline.stage import StageSummary
from lmrbench.core.datareads import withheld_paths
from lmrbench.core.source.candidate_splice import merge_notes, splice_candidate
from lmrbench.core.source.index import index_source
from lmrbench.core.source.tree import check_contained, goal_plan, read_source, read_untrusted_goal_file
from lmrbench.core.taskset import Task
from lmrbench.core.trust import is_trusted, trusted_paths
from lmrbench.errors import LmrError
from lmrbench.fsutil import staging_dir
from lmrbench.progress import NullProgress, Progress, check_cancel
from lmrbench.schemas.run import AgentExport, Candidate, CandidateStatus, RunManifest
from lmrbench.schemas.task_info import Implementation

PROMPT_FILE = "TASK.md"
PAPER_FILES = ("paper.pdf", "paper.json")
AGENT_PROMPT_VERSION = "agent-3"
_NEVER = {".git", ".hg", ".svn", "__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache", ".lmrbench"}


def _goal_files(task: Task) -> set[PurePosixPath]:
    return {PurePosixPath(f) for impl in task.info.implementations for f in impl.goal_files}


def unmarked_test_data(task: Task) -> list[str]:
    """Data files outside ``unit_test/`` that the task's tests read and the goal code does not
    (``core.datareads.withheld_paths``, what the grader's candidate view withholds too) and that info.json's
    trusted paths do not cover: ``validate`` lists what the tests read, so a task not validated since its tests
    changed can have some. Repository-relative; for a folder, its data files."""
    listed = trusted_paths(task)
    out: set[str] = set()
    for rel in withheld_paths(task):
        if is_trusted(rel, listed):
            continue
        path = task.repo_dir / rel
        if path.is_dir():
            out |= {p.relative_to(task.repo_dir).as_posix() for p in path.iterdir()
                    if p.is_file() and p.suffix != ".py"}
        else:
            out.add(rel)
    return sorted(out)


def _copy_repo(task: Task, dest: Path, withheld: list[str]) -> None:
    """Copy the masked repository without trusted files, ``withheld`` files, VCS folders, caches, compiled
    Python or symbolic links out of it.

    A goal file that lies among the trusted files is copied all the same (and nothing else there): official
    tasks (03, 06, 20) keep the goal function inside a test file, and the agent must have the file it edits.
    LmrError for a task whose links leave its folder.
    """
    check_contained(task)
    hidden = {PurePosixPath(p) for p in [*trusted_paths(task), *withheld]}
    goals = _goal_files(task)
    root = task.repo_dir

    def ignore(folder: str, names: list[str]) -> set[str]:
        rel = PurePosixPath(Path(folder).relative_to(root).as_posix())
        out = set()
        for name in names:
            path = Path(folder) / name
            here = rel / name if str(rel) != "." else PurePosixPath(name)
            trusted = any(here == h or h in here.parents for h in hidden)
            needed = here in goals or (path.is_dir() and any(here in g.parents for g in goals))
            escapes = path.is_symlink() and not path.resolve().is_relative_to(root.resolve())
            compiled = name.endswith((".pyc", ".pyo"))  # bytecode holds the golden code's names and constants
            if name in _NEVER or (trusted and not needed) or escapes or compiled:
                out.add(name)
        return out

    shutil.copytree(root, dest, symlinks=True, ignore=ignore)


_INTRO: dict[ContextSetting, str] = {
    "full": "The folder `{repo}/` is the paper's code repository with some functions left unimplemented "
    "(they raise NotImplementedError).",
    "paper+goal-file": "The folder `{repo}/` holds only the paper and the file(s) of the paper's code repository "
    "in which some functions are left unimplemented (they raise NotImplementedError); the rest of the "
    "repository is not given.",
    "paper-only": "The folder `{repo}/` holds only the paper and, in place of each file to complete, the "
    "signature and docstring of each function to implement; the paper's code repository is not given.",
}


def agent_prompt(task: Task, context: ContextSetting = "full") -> str:
    """TASK.md: what to implement, where, and the rules of the hand-off."""
    repo = task.info.repo_folder_name
    lines = [
        f"# {task.info.paper_name or task.name}",
        "",
        _INTRO[context].format(repo=repo)
        + f" The paper is `{repo}/paper.pdf`, its text per page `{repo}/paper.json`.",
        "",
        "Implement each function below in place, in its file, keeping its name, class and signature. "
        "From your work these functions are taken, with what you add for them at the top level of the same "
        "file (new imports, helper functions and classes, constants) and, for a method, in its class (new "
        "methods and class constants). Your edits of the file's existing helpers are what these functions "
        "use; the rest of the file keeps the original ones. Edits to other files and new files are ignored.",
        "",
    ]
    for impl in task.info.implementations:
        funcs = ", ".join(f"`{q}`" for _, quals in goal_plan(task, impl) for q in quals)
        lines += [
            f"## {impl.index}. {funcs} in `{repo}/{', '.join(impl.goal_files)}`",
            "",
            impl.instruction.strip() or "(no instruction given)",
            "",
        ]
        if impl.retrieval_context and context == "full":
            lines += ["Useful context: " + ", ".join(f"`{repo}/{c}`" for c in impl.retrieval_context), ""]
    return "\n".join(lines)


def _copy_reduced(task: Task, dest: Path, context: ContextSetting) -> None:
    """The paper files and, per goal file, the masked file (paper+goal-file) or its goal stubs (paper-only)."""
    dest.mkdir(parents=True)
    for name in PAPER_FILES:
        src = task.repo_dir / name
        if src.is_file() and not src.is_symlink():
            shutil.copyfile(src, dest / name)
    files: dict[str, list[str]] = {}
    for impl in task.info.implementations:
        plan = goal_plan(task, impl)
        if context == "paper+goal-file":
            for rel, _ in plan:
                files.setdefault(rel, [])
        else:
            for rel, quals in plan:
                files.setdefault(rel, []).extend(q for q in quals if q not in files.get(rel, []))
    for rel, quals in files.items():
        masked = read_untrusted_goal_file(task.repo_dir, rel)  # refuses a symlink or a path out of the repo
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(masked if context == "paper+goal-file" else goal_stub(masked, quals, file=rel), "utf-8")


def ship_requirements(task: Task, repo: Path) -> None:
    """Write the requirements the task's image is built from as ``repo/requirements.txt`` when they are not the
    repository's own file (a task-folder requirements.txt, or an environment.yml's pip section): the agent
    installs what the tests run with, not the repository's original."""
    from lmrbench.benchmark.sandbox.environments.requirements_source import read_task_requirements

    reqs = read_task_requirements(task)
    own = task.repo_dir / "requirements.txt"
    if reqs.source is None or reqs.source == own:
        return
    text = reqs.text if reqs.source.name == "requirements.txt" else "\n".join(reqs.lines) + "\n"
    where = reqs.source.relative_to(task.path).as_posix()
    note = f"# The requirements the task's environment is built from (the task's {where}).\n"
    (repo / "requirements.txt").write_text(note + text, "utf-8")


def export_agent(
    tasks: list[Task],
    out: Path,
    *,
    replace: bool = False,
    context: ContextSetting = "full",
    progress: Progress | None = None,
    cancel: threading.Event | None = None,
    keep: bool = True,
) -> Path:
    """Write the agent's view of ``tasks`` under an input setting to ``out`` (all or nothing).

    LmrError when ``out`` exists (without ``replace``). A task that cannot be exported (no goal function, a
    broken goal file) is left out with one ``warning:`` line on ``progress``; LmrError when no task is left.
    ``keep``: record the export on the host (``exports``), as ``import_agent`` needs; off for the views the
    agent runner makes and grades itself.
    """
    progress = progress or NullProgress()
    out = Path(out)
    if out.exists() and not replace:
        raise LmrError("already exists; choose another folder or pass --force", out)
    progress.start("export", len(tasks))
    with staging_dir(out, replace=replace) as tmp:
        done: list[str] = []
        for task in tasks:
            check_cancel(cancel)
            repo = tmp / task.name / task.info.repo_folder_name
            try:
                prompt = agent_prompt(task, context)
                if context == "full":
                    withheld = unmarked_test_data(task)
                    if withheld:
                        more = f" and {len(withheld) - 3} more" if len(withheld) > 3 else ""
                        progress.log(f"warning: {task.name}: withheld {', '.join(withheld[:3])}{more}: its tests "
                                     "read them outside unit_test/ and no trusted path covers them (the task was "
                                     "not validated since its tests changed); run `lmrbench validate`")
                    _copy_repo(task, repo, withheld)
                    ship_requirements(task, repo)
                else:
                    _copy_reduced(task, repo, context)
                (tmp / task.name / PROMPT_FILE).write_text(prompt, "utf-8")
                done.append(task.name)
            except (LmrError, OSError, UnicodeDecodeError) as exc:
                shutil.rmtree(tmp / task.name, ignore_errors=True)
                progress.log(f"warning: {task.name}: not exported: {exc}")
            progress.advance(1, task.name)
        if tasks and not done:
            raise LmrError("no task could be exported (see the warnings above)", out)
        record = new_record(tmp, done, context, __version__)
        save_model(tmp / EXPORT_JSON, record)
        if keep:
            keep_record(record)  # the host's copy, before the export is in place: the one import-agent trusts
    return out


def import_setting(agent_dir: Path, context: str | None) -> tuple[ContextSetting, AgentExport | None]:
    """The input setting an agent folder is graded in, and the host's record of its export: the record's
    setting; ``context`` (the user's word) where this machine holds no record; LmrError when neither says, or
    when they disagree."""
    record = host_record(agent_dir)
    if record is None:
        if context is None:
            raise LmrError("this machine holds no record of the export this folder was made from (its export.json "
                           "is the agent's to edit); pass --context to say which setting the agent worked in",
                           agent_dir)
        return check_context(context), None
    if context is not None and check_context(context) != record.context:
        raise LmrError(f"--context {context} differs from the setting this folder was exported with "
                       f"({record.context})", agent_dir)
    return record.context, record


def import_one(run: RunDir, task: Task, impl: Implementation, agent_dir: Path) -> Candidate:
    """Turn the agent's goal file(s) of one implementation into a candidate."""
    base = Candidate(task=task.name, impl=impl.index, source="agent", status=CandidateStatus.OK,
                     prompt_version=AGENT_PROMPT_VERSION)  # fmt: skip
    folder = agent_dir / task.name / task.info.repo_folder_name
    files: dict[str, str] = {}
    raw: list[str] = []
    functions: list[str] = []
    notes: dict[str, list[str]] = {}
    for which, (rel, quals) in enumerate(goal_plan(task, impl)):
        try:
            text = read_untrusted_goal_file(folder, rel)
        except LmrError as exc:
            return write_candidate(run, task, base.model_copy(update={
                "status": CandidateStatus.NO_FUNCTION, "reason": str(exc)}), "", {})  # fmt: skip
        raw.append(text)
        try:
            defined = {f.qualname for f in index_source(text, rel)}
        except LmrError as exc:
            bad = base.model_copy(update={"status": CandidateStatus.PARSE_ERROR, "reason": exc.problem})
            return write_candidate(run, task, bad, text, {})
        missing = [q for q in quals if q not in defined]
        if missing:
            reason = f"{rel} does not define {', '.join(missing)}"
            bad = base.model_copy(update={"status": CandidateStatus.NO_FUNCTION, "reason": reason})
            return write_candidate(run, task, bad, text, {})
        masked = read_source(task.goal_path(impl, which), task.goal_path(impl, which))
        try:
            spliced = splice_candidate(masked, text, quals, file=rel, donor_file=f"agent:{rel}")
        except LmrError as exc:
            bad = base.model_copy(update={"status": CandidateStatus.PARSE_ERROR, "reason": exc.problem})
            return write_candidate(run, task, bad, text, {})
        files[rel] = spliced.source
        functions += quals
        merge_notes(notes, spliced)
    done = base.model_copy(update={"functions": functions, **notes})
    return write_candidate(run, task, done, "\n".join(raw), files)


def import_agent(
    tasks: list[Task],
    agent_dir: Path,
    run_path: Path,
    *,
    label: str = "",
    bench: str = "",
    context: str | None = None,
    only_exported: bool = False,
    force: bool = False,
    progress: Progress | None = None,
    cancel: threading.Event | None = None,
) -> StageSummary:
    """Import every implementation of ``tasks`` from an agent's folder into the run at ``run_path``.

    Every task given is graded: one the agent's folder lacks is a wrong answer, unless ``only_exported`` keeps
    to the tasks the host's record of the export lists. The setting is the record's (``import_setting``);
    nothing is read from the agent's folder but its goal files and the id of its export."""
    agent_dir = Path(agent_dir)
    if not agent_dir.is_dir():
        raise LmrError("not a folder", agent_dir)
    summary = StageSummary()
    if not any((agent_dir / t.name).is_dir() for t in tasks):
        raise LmrError(
            "holds none of the task set's tasks (expected folders named like the tasks)", agent_dir
        )
    setting, record = import_setting(agent_dir, context)
    if only_exported:
        if record is None:
            raise LmrError("--only-exported needs the host's record of the export, and this machine holds none",
                           agent_dir)
        left = [t.name for t in tasks if t.name not in record.tasks]
        tasks = [t for t in tasks if t.name in record.tasks]
        if left:
            summary.notes.append(f"not exported, not graded (--only-exported): {', '.join(left)}")
    run = RunDir(Path(run_path))
    start_manifest(run, tasks, RunManifest(
        tool_version=__version__, source="agent", label=label or agent_dir.name, bench=bench,
        prompt_version=AGENT_PROMPT_VERSION, settings={CONTEXT_KEY: setting}, export=record), force=force)  # fmt: skip
    progress = progress or NullProgress()
    progress.start("import", sum(len(t.info.implementations) for t in tasks))
    for task in tasks:
        absent = not (agent_dir / task.name).is_dir()
        for impl in task.info.implementations:
            check_cancel(cancel)
            cand = import_one(run, task, impl, agent_dir)
            summary.statuses[cand.status.value] += 1
            if cand.status is not CandidateStatus.OK:
                why = "the agent's folder has no such task: a wrong answer" if absent else cand.reason
                summary.notes.append(f"wrong answer kept: {task.name}#{impl.index}: {cand.status.value}: {why}")
            progress.advance(1, f"{task.name}#{impl.index}")
    finish_manifest(run)
    return summary
