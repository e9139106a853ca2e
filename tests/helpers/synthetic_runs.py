"""Synthetic task sets and run folders for the analyses: tasks of chosen shape, outcomes drawn from a known model.

Test support: every file is written through the product's own models, as generate and evaluate would.
"""

from __future__ import annotations

from pathlib import Path

from helpers.tasks import Impl, write_task
from lmrbench.authoring.task.mask import mask_source
from lmrbench.benchmark.pipeline.rundir import RunDir, current_digest, save_model
from lmrbench.schemas.run import (
    Candidate,
    CandidateStatus,
    EvalResult,
    HumanLabel,
    JudgeCategory,
    LLMParams,
    ResultStatus,
    RunManifest,
    TaskEntry,
    Verdict,
)

REPO = "r"


def golden_source(lines: int) -> str:
    """A goal function ``f`` of exactly ``lines`` source lines (at least 3), after an import."""
    body = [f"    x = x + {i}" for i in range(lines - 3)]
    return (
        'import math\n\n\ndef f(x):\n    """A step of the method."""\n'
        + "\n".join(body)
        + ("\n" if body else "")
        + "    return math.floor(x)\n"
    )


def write_shaped_task(bench: Path, number: int, *, nest: int, root_files: int, docs: int, lines: int,
                      category: str = "Evaluation Metrics") -> str:  # fmt: skip
    """Task ``<number>-T<number>``: goal file ``nest`` folders deep, extra files at the root and in docs/."""
    name = f"{number}-T{number}"
    goal = "/".join([f"d{i}" for i in range(nest)] + ["goal.py"])
    golden = golden_source(lines)
    files = {f"top{i}.py": "X = 1\n" for i in range(root_files)}
    files.update({f"docs/page{i}.md": "text\n" for i in range(docs)})
    write_task(bench, name, repo=REPO, goal_file=goal, goal=mask_source(golden, ["f"], file=goal), golden=golden,
               impls=[Impl("f", "unit_test/unit_test_1.py", "Write f.", category)], files=files)
    return name


def write_run(path: Path, model: str, outcomes: dict[str, bool], *, bench: Path | None = None,
              category: str = "Evaluation Metrics", context: str = "full") -> RunDir:  # fmt: skip
    """A run of ``model`` whose candidate for task ``name`` (impl 1) passed its tests when ``outcomes[name]``."""
    run = RunDir(path)
    entries = [TaskEntry(name=n, instance_id=n.split("-")[0], digest="0" * 64, implementations=[1]) for n in outcomes]
    run.save_manifest(RunManifest(tool_version="0", source="generate", label=model, bench=str(bench or ""),
                                  generation=LLMParams(model=model, base_url="http://127.0.0.1:1/v1"),
                                  settings={"context": context}, tasks=entries))  # fmt: skip
    for name, ok in outcomes.items():
        folder = run.candidate_dir(name, 1)
        (folder / "repo").mkdir(parents=True, exist_ok=True)
        (folder / "repo" / "goal.py").write_text(f"# {name} by {model}\n")
        cand = current_digest(folder, Candidate(task=name, impl=1, source="generate", status=CandidateStatus.OK,
                                                goal_files=["goal.py"], model=model))  # fmt: skip
        digest = cand.digest
        save_model(folder / "candidate.json", cand)
        status = ResultStatus.PASSED if ok else ResultStatus.FAILED
        save_model(run.result_path(name, 1), EvalResult(task=name, impl=1, category=category, status=status,
                                                        candidate_digest=digest))  # fmt: skip
    return run


def add_verdicts_and_labels(run: RunDir, judged: dict[str, tuple[JudgeCategory, JudgeCategory | None]]) -> None:
    """Judge verdicts (judge ``j``) and human labels (when not None) for the run's candidates."""
    params = LLMParams(model="j", base_url="http://127.0.0.1:1/v1")
    for name, (verdict, label) in judged.items():
        digest = run.candidate(name, 1).digest  # type: ignore[union-attr]
        verdict_obj = Verdict(task=name, impl=1, category=verdict, judge=params, prompt_version="judge-1",
                              candidate_digest=digest)  # fmt: skip
        save_model(run.verdict_path("j", name, 1), verdict_obj)
        if label is not None:
            save_model(run.label_path("ann", name, 1),
                       HumanLabel(task=name, impl=1, label=label, candidate_digest=digest, annotator="ann"))
