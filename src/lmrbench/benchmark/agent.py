"""Hand tasks to an agent and take its work back as candidates.

``export_agent`` writes, per task, only what an agent may see: the masked repository (paper.pdf and paper.json
included) without unit tests, recorded data, trusted files or version-control history, and a TASK.md prompt
with the instructions. Golden files and info.json are never copied, and the export does not name the task
set's location. ``import_agent`` reads the agent's edited goal files and splices only the goal functions into
the pristine masked files, as candidates of a run.
"""

from __future__ import annotations

import shutil
import threading
from pathlib import Path, PurePosixPath

from lmrbench import __version__
from lmrbench.authoring.index import index_source
from lmrbench.authoring.splice import replace_functions
from lmrbench.authoring.tree import check_contained, read_untrusted_goal_file, trusted_paths
from lmrbench.benchmark.generate import goal_plan, start_manifest, write_candidate
from lmrbench.benchmark.rundir import RunDir
from lmrbench.benchmark.stage import StageSummary
from lmrbench.core.taskset import Task
from lmrbench.errors import LmrError
from lmrbench.fsutil import staging_dir
from lmrbench.progress import NullProgress, Progress, check_cancel
from lmrbench.schemas.run import Candidate, CandidateStatus, RunManifest
from lmrbench.schemas.task_info import Implementation

PROMPT_FILE = "TASK.md"
AGENT_PROMPT_VERSION = "agent-1"
_NEVER = {".git", ".hg", ".svn", "__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache", ".lmrbench"}


def _excluded(task: Task) -> set[PurePosixPath]:
    return {PurePosixPath(p) for p in trusted_paths(task)}


def _copy_repo(task: Task, dest: Path) -> None:
    """Copy the masked repository without trusted files, VCS folders, caches, compiled Python or symbolic links
    out of it; LmrError for a task whose links leave its folder."""
    check_contained(task)
    hidden = _excluded(task)
    root = task.repo_dir

    def ignore(folder: str, names: list[str]) -> set[str]:
        rel = PurePosixPath(Path(folder).relative_to(root).as_posix())
        out = set()
        for name in names:
            path = Path(folder) / name
            trusted = (rel / name if str(rel) != "." else PurePosixPath(name)) in hidden
            escapes = path.is_symlink() and not path.resolve().is_relative_to(root.resolve())
            compiled = name.endswith((".pyc", ".pyo"))  # bytecode holds the golden code's names and constants
            if name in _NEVER or trusted or escapes or compiled:
                out.add(name)
        return out

    shutil.copytree(root, dest, symlinks=True, ignore=ignore)


def agent_prompt(task: Task) -> str:
    """TASK.md: what to implement, where, and the rules of the hand-off."""
    repo = task.info.repo_folder_name
    lines = [
        f"# {task.info.paper_name or task.name}",
        "",
        f"The folder `{repo}/` is the paper's code repository with some functions left unimplemented "
        f"(they raise NotImplementedError). The paper is `{repo}/paper.pdf`, its text per page "
        f"`{repo}/paper.json`.",
        "",
        "Implement each function below in place, in its file, keeping its name, class and signature. "
        "Only these functions are taken from your work: other edits, new files and helper functions "
        "elsewhere are ignored.",
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
        if impl.retrieval_context:
            lines += ["Useful context: " + ", ".join(f"`{repo}/{c}`" for c in impl.retrieval_context), ""]
    return "\n".join(lines)


def export_agent(
    tasks: list[Task],
    out: Path,
    *,
    replace: bool = False,
    progress: Progress | None = None,
    cancel: threading.Event | None = None,
) -> Path:
    """Write the agent's view of ``tasks`` to ``out`` (all or nothing); LmrError when ``out`` exists."""
    progress = progress or NullProgress()
    out = Path(out)
    if out.exists() and not replace:
        raise LmrError("already exists; choose another folder or pass --force", out)
    progress.start("export", len(tasks))
    with staging_dir(out, replace=replace) as tmp:
        for task in tasks:
            check_cancel(cancel)
            _copy_repo(task, tmp / task.name / task.info.repo_folder_name)
            (tmp / task.name / PROMPT_FILE).write_text(agent_prompt(task), "utf-8")
            progress.advance(1, task.name)
    return out


def import_one(run: RunDir, task: Task, impl: Implementation, agent_dir: Path) -> Candidate:
    """Turn the agent's goal file(s) of one implementation into a candidate."""
    base = Candidate(task=task.name, impl=impl.index, source="agent", status=CandidateStatus.OK,
                     prompt_version=AGENT_PROMPT_VERSION)  # fmt: skip
    folder = agent_dir / task.name / task.info.repo_folder_name
    files: dict[str, str] = {}
    raw: list[str] = []
    functions: list[str] = []
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
        masked = task.goal_path(impl, which).read_text("utf-8")
        try:
            files[rel] = replace_functions(masked, text, quals, file=rel, donor_file=f"agent:{rel}")
        except LmrError as exc:
            bad = base.model_copy(update={"status": CandidateStatus.PARSE_ERROR, "reason": exc.problem})
            return write_candidate(run, task, bad, text, {})
        functions += quals
    return write_candidate(run, task, base.model_copy(update={"functions": functions}), "\n".join(raw), files)


def import_agent(
    tasks: list[Task],
    agent_dir: Path,
    run_path: Path,
    *,
    label: str = "",
    bench: str = "",
    progress: Progress | None = None,
    cancel: threading.Event | None = None,
) -> StageSummary:
    """Import every implementation of ``tasks`` from an agent's folder into the run at ``run_path``."""
    agent_dir = Path(agent_dir)
    if not agent_dir.is_dir():
        raise LmrError("not a folder", agent_dir)
    present = [t for t in tasks if (agent_dir / t.name).is_dir()]
    if not present:
        raise LmrError(
            "holds none of the task set's tasks (expected folders named like the tasks)", agent_dir
        )
    run = RunDir(Path(run_path))
    start_manifest(run, tasks, RunManifest(
        tool_version=__version__, source="agent", label=label or agent_dir.name, bench=bench,
        prompt_version=AGENT_PROMPT_VERSION))  # fmt: skip
    progress = progress or NullProgress()
    summary = StageSummary()
    progress.start("import", sum(len(t.info.implementations) for t in tasks))
    for task in tasks:
        for impl in task.info.implementations:
            check_cancel(cancel)
            cand = import_one(run, task, impl, agent_dir)
            summary.statuses[cand.status.value] += 1
            if cand.status is not CandidateStatus.OK:
                summary.problems.append(f"{task.name}#{impl.index}: {cand.status.value}: {cand.reason}")
            progress.advance(1, f"{task.name}#{impl.index}")
    return summary
