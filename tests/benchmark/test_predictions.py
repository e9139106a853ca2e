"""SWE-bench's predictions JSONL: a run's candidates exported as patches, imported back, graded the same; bad lines
and patches named by file and line."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from typer.testing import CliRunner

from helpers.llm_server import LLMServer
from helpers.run_task import GOAL, REPO, WRONG_DICE, golden_def, write_taskset
from lmrbench.benchmark.execution.sandboxes import get_sandbox
from lmrbench.benchmark.pipeline.evaluate import evaluate
from lmrbench.benchmark.pipeline.generate import generate
from lmrbench.benchmark.pipeline.llm import LLMClient, LLMConfig
from lmrbench.benchmark.pipeline.predictions import import_predictions, unified_diff
from lmrbench.benchmark.pipeline.rundir import RunDir
from lmrbench.cli.main import app
from lmrbench.core.taskset import load_taskset
from lmrbench.errors import LmrError
from lmrbench.schemas.run import CandidateStatus, LLMParams

DICE = "Functions to implement, in toy/metrics.py: dice"
APPLY = "Functions to implement, in toy/metrics.py: Scaler.apply"
TOTAL = "Functions to implement, in toy/metrics.py: total"


def lmrbench(*args: object) -> str:
    result = CliRunner().invoke(app, [str(a) for a in args], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return " ".join(result.output.split())


def verdicts(run: Path) -> dict[tuple[str, int], tuple[str, int, int]]:
    return {(r.task, r.impl): (r.status.value, r.passed_tests, r.total_tests) for r in RunDir(run).results()}


def test_exported_predictions_apply_to_the_masked_repository_and_import_to_the_same_verdicts(
    server: LLMServer, tmp_path: Path
) -> None:
    bench = write_taskset(tmp_path / "bench")
    server.on(DICE, WRONG_DICE)  # a plausible wrong answer: a constant
    server.on(APPLY, golden_def("Scaler.apply"))
    server.on(TOTAL, golden_def("total"))
    tasks, _ = load_taskset(bench)
    with LLMClient(LLMConfig(LLMParams(model="gen-m", base_url=server.base_url), cache_dir=None)) as client:
        generate(tasks, tmp_path / "run", client)
    sandbox = get_sandbox("local")
    evaluate(tasks, tmp_path / "run", sandbox, timeout=120)
    before = verdicts(tmp_path / "run")
    assert {k: v[0] for k, v in before.items()} == {("1-Toy", 1): "failed", ("1-Toy", 2): "passed",
                                                    ("2-Async", 1): "passed"}  # fmt: skip

    out = lmrbench("export-predictions", bench, tmp_path / "run", tmp_path / "preds.jsonl")
    assert "3 prediction(s)" in out
    rows = [json.loads(line) for line in (tmp_path / "preds.jsonl").read_text().splitlines()]
    assert [r["instance_id"] for r in rows] == ["1-Toy__1", "1-Toy__2", "2-Async__1"]
    assert {r["model_name_or_path"] for r in rows} == {"gen-m"}
    # each patch is what SWE-bench's harness applies: a git diff against the masked repository, as a clone has it
    for row in rows:
        task = row["instance_id"].split("__")[0]
        clone = tmp_path / "clones" / row["instance_id"]
        shutil.copytree(bench / task / REPO, clone)
        subprocess.run(["git", "init", "-q"], cwd=clone, check=True)
        subprocess.run(["git", "apply", "--check", "-"], cwd=clone, input=row["model_patch"].encode(), check=True)
        assert row["model_patch"].startswith(f"diff --git a/{GOAL} b/{GOAL}\n")
    assert "+    return 0.5" in rows[0]["model_patch"]

    res = CliRunner().invoke(app, ["import-predictions", str(bench), str(tmp_path / "preds.jsonl"), "--out",
                                   str(tmp_path / "back"), "--format", "json"])
    assert res.exit_code == 0, res.output
    [stage] = json.loads(res.stdout)["stages"]  # what the stage did, alone on stdout
    assert (stage["stage"], stage["statuses"], stage["problems"]) == ("import-predictions", {"ok": 3}, [])
    back = RunDir(tmp_path / "back")
    assert back.require_manifest().label == "gen-m"
    assert [c.status for c in back.candidates()] == [CandidateStatus.OK] * 3
    evaluate(tasks, tmp_path / "back", sandbox, timeout=120)
    assert verdicts(tmp_path / "back") == before  # the same verdicts, test by test


def test_each_bad_line_and_bad_patch_is_one_line_naming_the_file_and_line(tmp_path: Path) -> None:
    bench = write_taskset(tmp_path / "bench")
    tasks, _ = load_taskset(bench)
    masked = (bench / "1-Toy" / REPO / GOAL).read_text()
    golden_total = (bench / "2-Async" / REPO / GOAL).read_text()
    good = unified_diff(GOAL, golden_total, golden_total.replace("raise NotImplementedError", "return 0", 1))
    stale = unified_diff(GOAL, masked.replace("import math", "import cmath"), masked)  # context the file lacks
    elsewhere = unified_diff("toy/other.py", "a = 1\n", "a = 2\n")
    lines = [
        json.dumps({"instance_id": "2-Async__1", "model_name_or_path": "m", "model_patch": good}),
        "{not json",
        json.dumps({"instance_id": "1-Toy__1", "model_name_or_path": "m"}),
        json.dumps({"instance_id": "9-Nope__1", "model_name_or_path": "m", "model_patch": good}),
        json.dumps({"instance_id": "1-Toy__1", "model_name_or_path": "m", "model_patch": stale}),
        json.dumps({"instance_id": "1-Toy__2", "model_name_or_path": "m", "model_patch": elsewhere}),
        json.dumps({"instance_id": "2-Async__1", "model_name_or_path": "m", "model_patch": good}),
    ]
    preds = tmp_path / "preds.jsonl"
    preds.write_text("\n".join(lines) + "\n")
    summary = import_predictions(tasks, preds, tmp_path / "run")
    problems = summary.problems
    assert all("\n" not in p for p in problems)
    assert [p.split(": ")[0] for p in problems] == [f"{preds}:{n}" for n in (2, 3, 4, 7, 5, 6)]
    assert "not a JSON object" in problems[0]
    assert "model_patch missing or not text" in problems[1]
    assert "'9-Nope__1' names no implementation" in problems[2]
    assert "again (first on line 1)" in problems[3]
    assert "does not apply to the masked repository" in problems[4] and GOAL in problems[4]
    assert "changes toy/other.py, which is not a goal file of 1-Toy#2" in problems[5]
    run = RunDir(tmp_path / "run")
    assert run.candidate("2-Async", 1).status is CandidateStatus.OK  # type: ignore[union-attr]
    for impl in (1, 2):  # a patch that cannot be taken is a wrong answer, graded as one
        cand = run.candidate("1-Toy", impl)
        assert cand is not None and cand.status is CandidateStatus.NO_FUNCTION and str(preds) in cand.reason
    (tmp_path / "empty.jsonl").write_text("{not json\n")
    with pytest.raises(LmrError, match="holds no prediction for the task set"):
        import_predictions(tasks, tmp_path / "empty.jsonl", tmp_path / "run2")
