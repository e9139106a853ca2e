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
from lmrbench.benchmark.pipeline.rundir import RunDir, save_model, slug
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
    """What an import wrote."""

    runs: dict[str, Path] = field(default_factory=dict)
    verdicts: int = 0
    no_verdict: list[str] = field(default_factory=list)
    labels: int = 0
    annotators: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


class _Bench:
    """The task set, when given: task names, repo folders and implementation indexes by position."""

    def __init__(self, bench: Path | None) -> None:
        tasks: list[Task] = []
        if bench is not None:
            tasks, problems = load_taskset(bench)
            if problems:
                raise problems[0]
        self.by_number = {paper_number(t.name): t for t in tasks}
        self.by_name = {t.name: t for t in tasks}

    def repo_of(self) -> dict[str, str]:
        return {t.name: t.info.repo_folder_name for t in self.by_name.values()}

    def impl_index(self, task: str, position: int) -> int:
        t = self.by_name.get(task)
        if t is not None and position < len(t.info.implementations):
            return t.info.implementations[position].index
        return position + 1

    def position(self, task: str, impl: int) -> int:
        t = self.by_name.get(task)
        if t is not None:
            for k, i in enumerate(t.info.implementations):
                if i.index == impl:
                    return k
        return impl - 1


def import_official(
    results: Path, runs_dir: Path, *, bench: Path | None = None, judge: str = "official"
) -> ImportSummary:
    """Read RESULTS (never writing to it) and write one run folder per agent type and model into ``runs_dir``."""
    results = Path(results)
    if not (results / HUMAN_DIR).is_dir() and not (results / JUDGE_DIR).is_dir():
        raise LmrError(f"holds neither {HUMAN_DIR}/ nor {JUDGE_DIR}/", results)
    tasks = _Bench(bench)
    analyses = read_analyses(results, tasks.repo_of())
    records, warnings = read_human_files(results)
    summary = ImportSummary(warnings=warnings)
    names_by_number: dict[int, str] = {}
    for a in analyses:
        num = paper_number(a.task)
        if num is not None:
            names_by_number.setdefault(num, a.task)

    def task_name(number: int) -> str:
        t = tasks.by_number.get(number)
        return t.name if t is not None else names_by_number.get(number, str(number))

    sources: dict[tuple[str, str], OfficialSource] = {}

    def source(agent_type: str, model: str) -> OfficialSource:
        return sources.setdefault(
            (agent_type, model),
            OfficialSource(agent_type=agent_type, model_name=model, judge_folder=AGENT_FOLDERS[agent_type]),
        )

    params = LLMParams(model=judge, base_url="")
    for a in analyses:
        src = source(a.agent_type, a.model_name)
        src.repo_folders[a.task] = a.repo
        run = RunDir(Path(runs_dir) / _run_name(a.agent_type, a.model_name))
        impl = tasks.impl_index(a.task, a.function_index)
        category = JudgeCategory.from_score(a.score) if a.score is not None else None
        reason = "" if category else "the analysis holds no category 1-3"
        if category is None:
            summary.no_verdict.append(f"{a.file}: {reason}")
        verdict = Verdict(
            task=a.task, impl=impl, category=category, rationale=a.rationale, reason=reason,
            judge=params, prompt_version=OFFICIAL_PROMPT, raw_reply=a.text,
        )  # fmt: skip
        save_model(run.verdict_path(slug(judge), a.task, impl), verdict)
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
        src = source(r.agent_type, r.model_name)
        src.annotator_files[r.annotator] = r.file.stem
        run = RunDir(Path(runs_dir) / _run_name(r.agent_type, r.model_name))
        task = task_name(r.paper_index)
        impl = tasks.impl_index(task, r.function_index)
        label = HumanLabel(
            task=task, impl=impl, label=JudgeCategory.from_score(r.score), annotator=r.annotator, note=r.comment
        )
        save_model(run.label_path(r.annotator, task, impl), label)
        summary.labels += 1
    summary.annotators = sorted({r.annotator for r in records})
    for (agent_type, model), src in sorted(sources.items()):
        run = RunDir(Path(runs_dir) / _run_name(agent_type, model))
        prior = run.manifest()
        if prior is not None and prior.official is None:
            raise LmrError("is a run made by lmrbench, not an import: choose another --out", run.path)
        manifest = RunManifest(
            tool_version=__version__,
            source="generate" if agent_type == "no_agent" else "agent",
            label=_run_name(agent_type, model),
            bench=str(bench) if bench else "",
            judges={slug(judge): JudgeEntry(params=params, prompt_version=OFFICIAL_PROMPT)},
            official=src,
        )
        run.save_manifest(manifest)
        summary.runs[manifest.label] = run.path
    return summary


def _run_name(agent_type: str, model: str) -> str:
    return f"{agent_type}-{slug(model)}"


@dataclass
class ExportSummary:
    """What an export wrote."""

    human_files: list[Path] = field(default_factory=list)
    analyses: int = 0
    records: int = 0


def export_official(run_paths: list[Path], out: Path, *, judge: str | None = None) -> ExportSummary:
    """Write ``out/human_evaluation/`` and ``out/llm_as_a_judge_evaluation/`` from the runs."""
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
            name = f"{v.task}_{repo_of[v.task]}_{fi}_analysis.txt"
            dest = out / JUDGE_DIR / src.judge_folder / src.model_name / name
            atomic_write_text(dest, _analysis_text(v))
            summary.analyses += 1
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
