"""A small run to review, written by the core's own writers: the toy task set of the run tests, three
candidates (one wrong, two right), their unit-test results and a judge's verdicts."""

from __future__ import annotations

from pathlib import Path

from helpers.run_task import GOAL, METRICS_PY, write_taskset
from lmrbench.benchmark.pipeline.generate import write_candidate
from lmrbench.benchmark.pipeline.rundir import RunDir, save_model, task_entry
from lmrbench.core.taskset import load_taskset
from lmrbench.schemas.run import (
    Candidate,
    CandidateStatus,
    EvalResult,
    JudgeCategory,
    LLMParams,
    ResultStatus,
    RunManifest,
    Verdict,
)

WRONG_DICE = "    return 2 * len(a & b) / (len(a) + len(b))\n"
JUDGE = "judge-model"
FAILURE = "assert 0.5 == 0.6666666666666666\n +  where 0.5 = dice([1, 2, 3], [2, 3, 4])"

# (task, impl, candidate source, test status, judge category)
ITEMS = [
    ("1-Toy", 1, METRICS_PY.replace(WRONG_DICE, "    return 0.5\n"), ResultStatus.FAILED,
     JudgeCategory.LOGICALLY_INCORRECT),
    ("1-Toy", 2, METRICS_PY, ResultStatus.PASSED, JudgeCategory.COMPLETELY_CORRECT),
    ("2-Async", 1, METRICS_PY.replace("return sum(xs)", "return sum(x for x in xs)"), ResultStatus.PASSED,
     JudgeCategory.LOGICALLY_CORRECT),
]  # fmt: skip


def write_review_run(root: Path, name: str = "run") -> tuple[Path, Path]:
    """(task set, run folder) under ``root``."""
    bench = write_taskset(root / "bench")
    tasks = {t.name: t for t in load_taskset(bench)[0]}
    run = RunDir(root / name)
    run.save_manifest(
        RunManifest(
            tool_version="0", source="generate", label="toy-model", bench=str(bench),
            tasks=[task_entry(t) for t in tasks.values()],
        )
    )  # fmt: skip
    params = LLMParams(model=JUDGE, base_url="http://127.0.0.1:9/v1")
    for task, impl, source, status, category in ITEMS:
        fn = tasks[task].info.implementations[impl - 1].qualnames
        cand = Candidate(task=task, impl=impl, source="generate", status=CandidateStatus.OK, functions=fn,
                         model="toy-model")  # fmt: skip
        cand = write_candidate(run, tasks[task], cand, "reply", {GOAL: source})
        failed = status is ResultStatus.FAILED
        save_model(
            run.result_path(task, impl),
            EvalResult(
                task=task, impl=impl, status=status, candidate_digest=cand.digest, passed_tests=1 if failed else 1,
                total_tests=2 if failed else 1, reason="1 of 2 cases failed, first test_dice_overlap" if failed else "",
                failures={"unit_test_1.py::test_dice_overlap": FAILURE} if failed else {},
                category="Evaluation Metrics" if impl == 1 and task == "1-Toy" else None,
            ),
        )  # fmt: skip
        save_model(
            run.verdict_path(JUDGE, task, impl),
            Verdict(task=task, impl=impl, category=category, rationale=[f"The judge thinks {category.value}."],
                    candidate_digest=cand.digest, judge=params, prompt_version="test"),
        )  # fmt: skip
    return bench, run.path
