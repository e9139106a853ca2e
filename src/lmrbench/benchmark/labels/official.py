"""Import the official LMR-Bench results layout into run folders, and export run folders back to it.

Import makes one run folder per agent type and model (``no_agent-gpt4o``) holding the judge's verdicts
(``verdicts/<judge>/``) and every annotator's labels (``labels/<annotator>/``); files are written one by one,
atomically, and a re-import overwrites the same files (labels given since in lmrbench stay). The input files are
never modified. Export writes the same layout from any run: imported ones come back record for record.
"""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import BaseModel

from lmrbench import __version__
from lmrbench.benchmark.labels.official_files import (
    AGENT_FOLDERS,
    HUMAN_DIR,
    JUDGE_DIR,
    HumanRecord,
    paper_number,
    read_analyses,
    read_human_files,
)
from lmrbench.benchmark.labels.official_units import (
    RESULTS_TXT,
    UNIT_DIR,
    not_imported,
    read_unit_files,
    results_txt,
    unit_results,
)
from lmrbench.benchmark.pipeline.rundir import RunDir, save_model, slug, speaks_of_current
from lmrbench.core.taskset import Task, load_taskset
from lmrbench.errors import LmrError
from lmrbench.fsutil import atomic_write_json, atomic_write_text
from lmrbench.schemas.run import (
    HumanLabel,
    JudgeCategory,
    JudgeEntry,
    LLMParams,
    OfficialSource,
    RunManifest,
    Verdict,
)

OFFICIAL_PROMPT = "official"
"""The prompt version of verdicts imported from analysis files (their text is on the paper's scale)."""


@dataclass
class ImportSummary:
    """What an import wrote, and what it left out and why."""

    runs: dict[str, Path] = field(default_factory=dict)
    verdicts: int = 0
    no_verdict: list[str] = field(default_factory=list)
    labels: int = 0
    annotators: list[str] = field(default_factory=list)
    unit_results: int = 0
    """Implementation outcomes read from results.txt files."""
    warnings: list[str] = field(default_factory=list)
    skipped_tasks: list[str] = field(default_factory=list)
    """One line per task of ``--bench`` that could not be loaded (its results keep the names they have)."""
    not_imported: list[str] = field(default_factory=list)
    """One line per file or folder of the results that was not imported, and why."""


class _Bench:
    """The task set, when given: tasks by folder number (padded or not), implementation indexes by position.

    Broken tasks are skipped (one line each in ``problems``); the official set holds empty submodule folders.
    """

    def __init__(self, bench: Path | None) -> None:
        tasks: list[Task] = []
        self.problems: list[str] = []
        if bench is not None:
            tasks, problems = load_taskset(bench)
            self.problems = [str(p) for p in problems]
        self.by_number = {n: t for t in tasks if (n := paper_number(t.name)) is not None}
        self.by_name = {t.name: t for t in tasks}

    def canonical(self, name: str) -> str:
        """The task set's folder name for a name the results use (``1-DPO`` -> ``01-DPO``), else ``name``."""
        t = self.by_number.get(paper_number(name))  # type: ignore[arg-type]
        return t.name if t is not None else name

    def repo_of(self) -> dict[str, str]:
        return {t.name: t.info.repo_folder_name for t in self.by_name.values()}

    def impl_index(self, task: str, position: int) -> int:
        t = self.by_name.get(task)
        if t is not None and position < len(t.info.implementations):
            return t.info.implementations[position].index
        return position + 1

    def indexes(self, task: str) -> list[int]:
        """Every implementation index of a task (``[1]`` when the task set does not hold it)."""
        t = self.by_name.get(task)
        return [i.index for i in t.info.implementations] if t is not None else [1]

    def category(self, task: str, impl: int) -> str | None:
        t = self.by_name.get(task)
        for i in t.info.implementations if t is not None else []:
            if i.index == impl and (cat := i.category_normalized) is not None:
                return cat.value
        return None

    def position(self, task: str, impl: int) -> int:
        t = self.by_name.get(task)
        if t is not None:
            for k, i in enumerate(t.info.implementations):
                if i.index == impl:
                    return k
        return impl - 1


@dataclass
class _Pending:
    """Everything one run folder will receive, gathered before anything is written."""

    source: OfficialSource
    files: dict[Path, BaseModel] = field(default_factory=dict)


def import_official(
    results: Path, runs_dir: Path, *, bench: Path | None = None, judge: str = "official"
) -> ImportSummary:
    """Read RESULTS (never writing to it) and write one run folder per agent type and model into ``runs_dir``.

    Every file is read and checked first; a bad label or a runs folder made by lmrbench stops the import
    before anything is written.
    """
    results = Path(results)
    if not any((results / d).is_dir() for d in (HUMAN_DIR, JUDGE_DIR, UNIT_DIR)):
        raise LmrError(f"holds none of {HUMAN_DIR}/, {JUDGE_DIR}/, {UNIT_DIR}/", results)
    tasks = _Bench(bench)
    analyses, skipped = read_analyses(results)
    records, warnings = read_human_files(results)
    units = read_unit_files(results)
    summary = ImportSummary(warnings=warnings, skipped_tasks=tasks.problems)
    summary.not_imported = skipped + not_imported(results)
    names_by_number: dict[int, str] = {}
    for name in [a.task for a in analyses] + [o.task for u in units for o in u.outcomes]:
        num = paper_number(name)
        if num is not None:
            names_by_number.setdefault(num, tasks.canonical(name))

    def task_name(number: int) -> str:
        t = tasks.by_number.get(number)
        return t.name if t is not None else names_by_number.get(number, str(number))

    runs: dict[str, _Pending] = {}

    def pending(agent_type: str, model: str) -> _Pending:
        name = _run_name(agent_type, model)
        if name not in runs:
            src = OfficialSource(agent_type=agent_type, model_name=model, judge_folder=AGENT_FOLDERS[agent_type])
            runs[name] = _Pending(src)
        return runs[name]

    params = LLMParams(model=judge, base_url="")
    for a in analyses:
        run = pending(a.agent_type, a.model_name)
        task = tasks.canonical(a.task)
        run.source.repo_folders[task] = a.repo
        if task != a.task:
            run.source.result_names[task] = a.task
        impl = tasks.impl_index(task, a.function_index)
        category = JudgeCategory.from_score(a.score) if a.score is not None else None
        reason = "" if category else "the analysis holds no category 1-3"
        if category is None:
            summary.no_verdict.append(f"{a.file}: {reason}")
        verdict = Verdict(
            task=task, impl=impl, category=category, rationale=a.rationale, reason=reason,
            judge=params, prompt_version=OFFICIAL_PROMPT, raw_reply=a.text,
        )  # fmt: skip
        run.files[RunDir(Path(".")).verdict_path(slug(judge), task, impl)] = verdict
        summary.verdicts += 1
    seen: dict[tuple[str, str, str, int, int], HumanRecord] = {}
    folders: dict[str, str] = {}
    for r in records:
        key = (r.annotator, r.agent_type, r.model_name, r.paper_index, r.function_index)
        if key in seen:
            raise LmrError(
                f"record {r.record} labels paper {r.paper_index} function {r.function_index} of "
                f"{r.model_name} again (annotator {r.annotator!r})",
                r.file,
            )
        seen[key] = r
        if folders.setdefault(slug(r.annotator), r.annotator) != r.annotator:
            raise LmrError(f"annotators {r.annotator!r} and {folders[slug(r.annotator)]!r} share a folder name")
        run = pending(r.agent_type, r.model_name)
        run.source.annotator_files[r.annotator] = r.file.stem
        task = task_name(r.paper_index)
        impl = tasks.impl_index(task, r.function_index)
        label = HumanLabel(
            task=task, impl=impl, label=JudgeCategory.from_score(r.score), annotator=r.annotator, note=r.comment
        )
        run.files[RunDir(Path(".")).label_path(r.annotator, task, impl)] = label
        summary.labels += 1
    summary.annotators = sorted({r.annotator for r in records})
    for u in units:
        run = pending(u.agent_type, u.model_name)
        run.source.unit_results = str(u.path.relative_to(results))
        results_of = unit_results(u, tasks.canonical, tasks.indexes, tasks.category, summary.not_imported)
        for original, result in results_of:
            if result.task != original:
                run.source.result_names[result.task] = original
            run.files[RunDir(Path(".")).result_path(result.task, result.impl)] = result
        summary.unit_results += len(results_of)
    for name in runs:
        prior = RunDir(Path(runs_dir) / name).manifest()
        if prior is not None and prior.official is None:
            raise LmrError("is a run made by lmrbench, not an import: choose another --out", Path(runs_dir) / name)
    for name, run_data in sorted(runs.items()):
        out = RunDir(Path(runs_dir) / name)
        for rel, model in run_data.files.items():
            save_model(out.path / rel, model)
        manifest = RunManifest(
            tool_version=__version__,
            source="generate" if run_data.source.agent_type == "no_agent" else "agent",
            label=name,
            bench=str(Path(bench).resolve()) if bench else "",
            judges={slug(judge): JudgeEntry(params=params, prompt_version=OFFICIAL_PROMPT)}
            if any(isinstance(m, Verdict) for m in run_data.files.values())
            else {},
            official=run_data.source,
        )
        out.save_manifest(manifest)
        summary.runs[name] = out.path
    return summary


def _run_name(agent_type: str, model: str) -> str:
    return f"{agent_type}-{slug(model)}"


@dataclass
class ExportSummary:
    """What an export wrote."""

    human_files: list[Path] = field(default_factory=list)
    analyses: int = 0
    records: int = 0
    unit_files: list[Path] = field(default_factory=list)


def export_official(run_paths: list[Path], out: Path, *, judge: str | None = None) -> ExportSummary:
    """Write ``out/human_evaluation/``, ``out/llm_as_a_judge_evaluation/`` and, for runs with unit-test outcomes,
    ``out/unit_test_evaluation/<agent folder>/<model>/results.txt`` from the runs."""
    out = Path(out)
    summary = ExportSummary()
    human: dict[str, list[dict[str, object]]] = defaultdict(list)
    files: dict[str, str] = {}
    for path in run_paths:
        run = RunDir(Path(path))
        manifest = run.require_manifest()
        src = manifest.official or OfficialSource(
            agent_type="no_agent" if manifest.source == "generate" else "openhands_agent",
            model_name=(manifest.generation.model if manifest.generation else manifest.label) or run.path.name,
            judge_folder="BaseAgent" if manifest.source == "generate" else "OpenHands",
        )
        tasks = _Bench(Path(manifest.bench) if manifest.bench and Path(manifest.bench).is_dir() else None)
        repo_of = {**tasks.repo_of(), **src.repo_folders}
        judges = run.judges()
        if judge is not None and judge not in judges:
            have = ", ".join(judges) or "none"
            raise LmrError(f"no verdicts of judge {judge!r} (judges here: {have})", run.path)
        if judge is None and len(judges) > 1:
            raise LmrError(f"several judges ({', '.join(judges)}): choose one with --judge", run.path)
        for v in run.verdicts(judge or judges[0]) if judges else []:
            if v.task not in repo_of:
                raise LmrError(f"the repository folder of task {v.task} is unknown (its task set is gone)", run.path)
            fi = tasks.position(v.task, v.impl)
            name = f"{src.result_names.get(v.task, v.task)}_{repo_of[v.task]}_{fi}_analysis.txt"
            dest = out / JUDGE_DIR / src.judge_folder / src.model_name / name
            atomic_write_text(dest, _analysis_text(v))
            summary.analyses += 1
        cands = {(c.task, c.impl): c for c in run.candidates()}
        outcomes = [r for r in run.results() if speaks_of_current(cands, (r.task, r.impl), r.candidate_digest)]
        if outcomes:
            dest = out / UNIT_DIR / src.judge_folder / src.model_name / RESULTS_TXT
            atomic_write_text(dest, results_txt(outcomes, src.result_names))
            summary.unit_files.append(dest)
        for lab in run.labels():
            number = paper_number(lab.task)
            if number is None:
                raise LmrError(f"task {lab.task!r} has no leading number to give as paper_index", run.path)
            files.setdefault(lab.annotator, src.annotator_files.get(lab.annotator, slug(lab.annotator)))
            human[lab.annotator].append({
                "annotator": lab.annotator, "agent_type": src.agent_type, "model_name": src.model_name,
                "paper_index": number, "function_index": tasks.position(lab.task, lab.impl),
                "human_judge_result": lab.label.score, "comment": lab.note,
            })  # fmt: skip
    for annotator, records in sorted(human.items()):
        records.sort(key=lambda r: tuple(str(r[k]).zfill(9) for k in _ORDER))
        dest = out / HUMAN_DIR / f"{files[annotator]}.json"
        atomic_write_json(dest, records)
        summary.human_files.append(dest)
        summary.records += len(records)
    return summary


_ORDER = ("agent_type", "model_name", "paper_index", "function_index")


def _analysis_text(v: Verdict) -> str:
    """The analysis file of a verdict: an imported text verbatim; else a JSON object on the paper's scale."""
    if v.prompt_version == OFFICIAL_PROMPT and v.raw_reply:
        return v.raw_reply
    body = {"category": str(v.category.score) if v.category else "", "rationale": v.rationale or [v.reason]}
    return json.dumps(body, indent=2, ensure_ascii=False) + "\n"
