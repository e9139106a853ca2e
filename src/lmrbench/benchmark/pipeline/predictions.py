"""SWE-bench's predictions JSONL, both ways: agents run elsewhere are graded here, and ours there.

Each line is ``{"instance_id", "model_name_or_path", "model_patch"}``; an instance is one implementation of a task
(``<task>__<impl>``, e.g. ``1-Toy__2``) and its patch is a unified diff against the masked repository, paths
relative to the repository's root (``a/toy/metrics.py``). ``import_predictions`` applies each patch to the masked
goal files with ``git apply`` and takes the result in as ``import-agent`` does an agent's folder (the goal
functions spliced into the pristine masked files); ``export_predictions`` writes a run's candidates the same way
(a candidate without code: an empty patch, which SWE-bench grades as a failure).
A line that is not a prediction, or names no task, is one problem line naming the file and the line; a patch that
does not apply, or changes a file other than the goal files, is one too, and its candidate is a wrong answer.
"""

from __future__ import annotations

import difflib
import json
import shutil
import subprocess
import tempfile
import threading
from pathlib import Path, PurePosixPath

from lmrbench import __version__
from lmrbench.benchmark.pipeline.agent import AGENT_PROMPT_VERSION, import_one
from lmrbench.benchmark.pipeline.generate import start_manifest, write_candidate
from lmrbench.benchmark.pipeline.rundir import RunDir, candidate_repo
from lmrbench.benchmark.pipeline.stage import StageSummary
from lmrbench.core.source.tree import goal_plan
from lmrbench.core.taskset import Task
from lmrbench.errors import LmrError
from lmrbench.fsutil import atomic_write_text
from lmrbench.progress import check_cancel
from lmrbench.schemas.run import Candidate, CandidateStatus, RunManifest
from lmrbench.schemas.task_info import Implementation

FIELDS = ("instance_id", "model_name_or_path", "model_patch")
PREDICTIONS_KEY = "predictions"
"""The run setting naming the predictions file a run was imported from."""


def instance_id(task: str, impl: int) -> str:
    """The instance id of one implementation of a task: ``<task>__<impl>``."""
    return f"{task}__{impl}"


def _instance(value: str, tasks: dict[str, Task]) -> tuple[Task, Implementation] | None:
    name, sep, index = value.rpartition("__")
    task = tasks.get(name) if sep and index.isdigit() else None
    if task is None:
        return None
    found = [i for i in task.info.implementations if i.index == int(index)]
    return (task, found[0]) if found else None


def unified_diff(rel: str, before: str, after: str) -> str:
    """A git-style unified diff of one file (``a/rel`` to ``b/rel``); empty when nothing changed."""
    if before == after:
        return ""
    lines = difflib.unified_diff(before.splitlines(keepends=True), after.splitlines(keepends=True),
                                 fromfile=f"a/{rel}", tofile=f"b/{rel}")  # fmt: skip
    body = "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines)
    return f"diff --git a/{rel} b/{rel}\n{body}"


def patched_paths(patch: str) -> list[str]:
    """The repository paths a unified diff touches (``a/`` and ``b/`` prefixes dropped; /dev/null left out)."""
    paths: list[str] = []
    for line in patch.splitlines():
        if line.startswith(("--- ", "+++ ")):
            path = line[4:].split("\t")[0].strip()
            if path != "/dev/null":
                path = path[2:] if path[:2] in ("a/", "b/") else path
                if path not in paths:
                    paths.append(path)
    return paths


def export_predictions(tasks: list[Task], run_path: Path, out: Path, *, model: str = "") -> int:
    """Write the run's candidates as a predictions JSONL at ``out`` (atomically); the number of lines.

    ``model``: the ``model_name_or_path`` to write (default: the run's label)."""
    run = RunDir(Path(run_path))
    manifest = run.require_manifest()
    by_name = {t.name: t for t in tasks}
    lines: list[str] = []
    for cand in sorted(run.candidates(), key=lambda c: (c.task, c.impl)):
        task = by_name.get(cand.task)
        if task is None:
            continue
        impl = task.info.implementation(cand.impl)
        patch = ""
        repo = candidate_repo(run.candidate_dir(cand.task, cand.impl), cand.goal_files) if cand.goal_files else None
        if repo is not None and cand.status is CandidateStatus.OK:
            for which, (rel, _) in enumerate(goal_plan(task, impl)):
                masked = task.goal_path(impl, which).read_text("utf-8")
                mine = repo / rel
                patch += unified_diff(rel, masked, mine.read_text("utf-8") if mine.is_file() else masked)
        row = {"instance_id": instance_id(cand.task, cand.impl), "model_name_or_path": model or manifest.label,
               "model_patch": patch}  # fmt: skip
        lines.append(json.dumps(row, ensure_ascii=False))
    if not lines:
        raise LmrError("holds no candidate of the task set to export", run.path)
    atomic_write_text(Path(out), "\n".join(lines) + "\n")
    return len(lines)


def _apply(task: Task, impl: Implementation, patch: str, where: str) -> Path:
    """A folder laid out as an agent's export (``<task>/<repo>/<goal files>``) holding the masked goal files with
    ``patch`` applied; LmrError naming ``where`` when it touches another file or does not apply."""
    plan = goal_plan(task, impl)
    goals = [rel for rel, _ in plan]
    if not patch.strip():
        raise LmrError(f"{where}: the patch is empty")
    stray = [p for p in patched_paths(patch) if p not in goals]
    if stray:
        raise LmrError(f"{where}: the patch changes {stray[0]}, which is not a goal file of "
                       f"{task.name}#{impl.index} ({', '.join(goals)})")  # fmt: skip
    root = Path(tempfile.mkdtemp(prefix="lmrbench-predictions-"))
    repo = root / task.name / task.info.repo_folder_name
    for which, rel in enumerate(goals):
        dest = repo / PurePosixPath(rel)
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_bytes(task.goal_path(impl, which).read_bytes())
    proc = subprocess.run(["git", "apply", "--whitespace=nowarn", "-p1", "-"], cwd=repo, input=patch.encode(),
                          capture_output=True, check=False)  # fmt: skip
    if proc.returncode != 0:
        why = next((ln for ln in proc.stderr.decode(errors="replace").splitlines() if ln.strip()), "git apply failed")
        raise LmrError(f"{where}: the patch does not apply to the masked repository: {why.removeprefix('error: ')}")
    return root


def import_predictions(
    tasks: list[Task],
    predictions: Path,
    run_path: Path,
    *,
    label: str = "",
    bench: str = "",
    cancel: threading.Event | None = None,
) -> StageSummary:
    """Import a predictions JSONL into the run at ``run_path`` as candidates, one per line naming a task's
    implementation; the tasks no line names are not graded, and the summary's notes say so."""
    predictions = Path(predictions)
    try:
        text = predictions.read_text("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise LmrError(f"cannot be read: {exc}", predictions) from None
    by_name = {t.name: t for t in tasks}
    summary = StageSummary()
    rows: list[tuple[int, Task, Implementation, str, str]] = []
    seen: dict[str, int] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        where = f"{predictions}:{number}"
        try:
            row = json.loads(line)
        except ValueError as exc:
            summary.problems.append(f"{where}: not a JSON object ({exc})")
            continue
        wrong = [f for f in FIELDS if not isinstance(row, dict) or not isinstance(row.get(f), str)]
        if wrong:
            summary.problems.append(f"{where}: not a prediction: {', '.join(wrong)} missing or not text "
                                    f"(a line holds {', '.join(FIELDS)})")  # fmt: skip
            continue
        found = _instance(row["instance_id"], by_name)
        if found is None:
            summary.problems.append(f"{where}: instance_id {row['instance_id']!r} names no implementation of the "
                                    "task set (<task>__<impl>, e.g. 1-Toy__1)")  # fmt: skip
            continue
        if row["instance_id"] in seen:
            summary.problems.append(f"{where}: instance_id {row['instance_id']!r} again (first on line "
                                    f"{seen[row['instance_id']]}); the first is kept")  # fmt: skip
            continue
        seen[row["instance_id"]] = number
        rows.append((number, *found, row["model_patch"], row["model_name_or_path"]))
    if not rows:
        raise LmrError("holds no prediction for the task set" + (f": {summary.problems[0]}" if summary.problems
                                                                  else ""), predictions)  # fmt: skip
    models = sorted({r[4] for r in rows})
    if len(models) > 1:
        summary.notes.append(f"the predictions name {len(models)} models ({', '.join(models)}); the run is one")
    named = {(t.name, i.index) for _, t, i, _, _ in rows}
    left = [instance_id(t.name, i.index) for t in tasks for i in t.info.implementations
            if (t.name, i.index) not in named]  # fmt: skip
    if left:
        summary.notes.append(f"no prediction, not graded: {', '.join(left)}")
    run = RunDir(Path(run_path))
    graded = [t for t in tasks if any(t.name == n for n, _ in named)]
    start_manifest(run, graded, RunManifest(
        tool_version=__version__, source="agent", label=label or models[0], bench=bench,
        prompt_version=AGENT_PROMPT_VERSION, settings={PREDICTIONS_KEY: predictions.name}))  # fmt: skip
    for number, task, impl, patch, _ in rows:
        check_cancel(cancel)
        where = f"{predictions}:{number}"
        try:
            folder = _apply(task, impl, patch, where)
        except LmrError as exc:
            summary.problems.append(str(exc))
            bad = Candidate(task=task.name, impl=impl.index, source="agent", status=CandidateStatus.NO_FUNCTION,
                            reason=str(exc), prompt_version=AGENT_PROMPT_VERSION)  # fmt: skip
            summary.statuses[write_candidate(run, task, bad, patch, {}).status.value] += 1
            continue
        try:
            cand = import_one(run, task, impl, folder)
        finally:
            shutil.rmtree(folder, ignore_errors=True)
        summary.statuses[cand.status.value] += 1
        if cand.status is not CandidateStatus.OK:
            summary.problems.append(f"{where}: {task.name}#{impl.index}: {cand.status.value}: {cand.reason}")
    return summary
