"""The logistic regression recovers a known model, and refuses data that cannot support a fit."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from helpers.synthetic_runs import write_run, write_shaped_task
from lmrbench.benchmark.analysis.regression import Observation, fit_logit
from lmrbench.benchmark.analysis.structure import PREDICTORS
from lmrbench.errors import LmrError

EXE = str(Path(sys.executable).with_name("lmrbench"))


def _z(values: np.ndarray) -> np.ndarray:
    return (values - values.mean()) / values.std(ddof=1)


def test_recovers_signs_and_covers_the_true_coefficients() -> None:
    rng = np.random.default_rng(20251123)
    n = 2400
    raw = {
        "depth": rng.normal(2.5, 0.6, n),
        "branch_factor": rng.normal(1.5, 0.5, n),
        "imbalance": rng.uniform(0.0, 1.0, n),
        "goal_lines": rng.gamma(3.0, 10.0, n),
    }
    models = np.sort(rng.choice(["base", "big", "small"], n))  # "base" first: the reference
    truth = {"const": -0.3, "depth": -0.8, "branch_factor": 0.5, "imbalance": 0.0, "goal_lines": -1.2,
             "model[big]": 0.9, "model[small]": -0.7}  # fmt: skip
    eta = truth["const"] + sum(truth[k] * _z(raw[k]) for k in PREDICTORS)
    eta = eta + truth["model[big]"] * (models == "big") + truth["model[small]"] * (models == "small")
    success = rng.random(n) < 1.0 / (1.0 + np.exp(-eta))
    obs = [
        Observation(str(models[i]), f"{i}-T", 1, bool(success[i]), {k: float(raw[k][i]) for k in PREDICTORS})
        for i in range(n)
    ]
    result = fit_logit(obs, PREDICTORS)
    assert result.reference_model == "base" and result.n == n
    got = {c.name: c for c in result.coefficients}
    assert list(got) == list(truth)
    for name, value in truth.items():
        assert got[name].ci_low <= value <= got[name].ci_high, (name, value, got[name])
        if value != 0.0:
            assert np.sign(got[name].coef) == np.sign(value) and got[name].p < 0.05, name
    assert got["imbalance"].p > 0.05  # no effect, none found
    c = got["depth"]
    assert c.z == pytest.approx(c.coef / c.std_err)
    assert c.ci_low == pytest.approx(c.coef - 1.959964 * c.std_err, rel=1e-4)


def _obs(xs: list[float], ys: list[bool]) -> list[Observation]:
    return [Observation("m", f"{i}-T", 1, y, {"depth": x, "branch_factor": 1.0, "imbalance": 0.0, "goal_lines": x * x})
            for i, (x, y) in enumerate(zip(xs, ys, strict=True))]  # fmt: skip


def test_refuses_data_that_cannot_support_a_fit() -> None:
    with pytest.raises(LmrError, match="all 4 observations succeeded"):
        fit_logit(_obs([1, 2, 3, 4], [True] * 4), PREDICTORS)
    with pytest.raises(LmrError, match="too few data: 2 successes and 2 failures for 3 coefficients"):
        fit_logit(_obs([1, 2, 3, 4], [False, True, False, True]), PREDICTORS)
    xs = [float(i) for i in range(1, 21)]
    with pytest.raises(LmrError, match="perfectly separated"):
        fit_logit(_obs(xs, [x > 10 for x in xs]), PREDICTORS)


def test_cli_on_synthetic_run_folders(tmp_path) -> None:
    """Tasks of varied shape, two models, outcomes drawn from a known model on goal lines and the model."""
    rng = np.random.default_rng(7)
    bench = tmp_path / "bench"
    goal: dict[str, float] = {}
    for k in range(1, 151):
        nest, root_files, docs, lines = (int(rng.integers(lo, hi)) for lo, hi in ((0, 4), (0, 4), (0, 4), (3, 40)))
        goal[write_shaped_task(bench, k, nest=nest, root_files=root_files, docs=docs, lines=lines)] = float(lines)
    values = np.array(list(goal.values()) * 2)
    mean, sd = values.mean(), values.std(ddof=1)
    for model, shift in (("weak", -0.5), ("strong", 1.5)):
        eta = {n: 0.3 + shift - 1.8 * (goal[n] - mean) / sd for n in goal}
        write_run(tmp_path / model, model, {n: bool(rng.random() < 1 / (1 + np.exp(-e))) for n, e in eta.items()},
                  bench=bench)  # fmt: skip
    out = subprocess.run([EXE, "analyze", "regression", str(tmp_path / "weak"), str(tmp_path / "strong"),
                          "--json", str(tmp_path / "reg.json")], capture_output=True, text=True)  # fmt: skip
    assert out.returncode == 0, out.stderr
    for head in ("coef", "std err", "P>|z|", "[0.025", "0.975]", "goal_lines", "model[strong]"):
        assert head in out.stdout
    data = json.loads((tmp_path / "reg.json").read_text())
    got = {c["name"]: c for c in data["coefficients"]}
    assert data["n"] == 300 and data["reference_model"] == "weak"
    assert got["goal_lines"]["coef"] < 0 and got["goal_lines"]["ci_low"] <= -1.8 <= got["goal_lines"]["ci_high"]
    assert got["model[strong]"]["coef"] > 0 and got["model[strong]"]["ci_low"] <= 2.0 <= got["model[strong]"]["ci_high"]

    few = tmp_path / "few"
    write_run(few, "m", {"1-T1": True, "2-T2": False}, bench=bench)
    bad = subprocess.run([EXE, "analyze", "regression", str(few)], capture_output=True, text=True)
    assert bad.returncode == 1 and "too few data: 1 successes and 1 failures" in bad.stderr
    assert len(bad.stderr.strip().splitlines()) == 1
    human = subprocess.run([EXE, "analyze", "regression", str(few), "--outcome", "human"], capture_output=True,
                           text=True)  # fmt: skip
    assert human.returncode == 1 and f"give the fit no outcome: {few} (m) holds no human label" in human.stderr


def test_human_outcome_is_a_majority_of_completely_correct_labels_of_the_current_candidate(tmp_path) -> None:
    from lmrbench.benchmark.analysis.outcomes import human_outcomes, unit_test_outcomes
    from lmrbench.benchmark.pipeline.rundir import RunDir, save_model
    from lmrbench.schemas.run import HumanLabel, JudgeCategory

    run = write_run(tmp_path / "run", "m", {"1-A": True, "2-B": False, "3-C": True, "4-D": False})
    labels = {
        "1-A": JudgeCategory.COMPLETELY_CORRECT,
        "2-B": JudgeCategory.COMPLETELY_CORRECT,  # tests failed, a human disagrees: the human outcome wins
        "3-C": JudgeCategory.LOGICALLY_CORRECT,
    }
    for task, label in labels.items():
        digest = run.candidate(task, 1).digest  # type: ignore[union-attr]
        save_model(run.label_path("ann", task, 1),
                   HumanLabel(task=task, impl=1, label=label, candidate_digest=digest, annotator="ann"))
    # a label of an earlier candidate (another digest) does not count
    save_model(run.label_path("ann", "4-D", 1), HumanLabel(task="4-D", impl=1, label=JudgeCategory.COMPLETELY_CORRECT,
                                                           candidate_digest="old", annotator="ann"))  # fmt: skip
    assert human_outcomes(RunDir(run.path)) == {("1-A", 1): True, ("2-B", 1): True, ("3-C", 1): False}
    assert unit_test_outcomes(RunDir(run.path)) == {
        ("1-A", 1): True, ("2-B", 1): False, ("3-C", 1): True, ("4-D", 1): False,
    }  # fmt: skip


def test_the_fit_is_set_beside_the_papers_table_5_with_gpt41_as_reference(tmp_path) -> None:
    from typer.testing import CliRunner

    from lmrbench.cli.main import app

    rng = np.random.default_rng(11)
    bench = tmp_path / "bench"
    names = [write_shaped_task(bench, k, nest=int(rng.integers(0, 4)), root_files=int(rng.integers(0, 4)),
                               docs=int(rng.integers(0, 4)), lines=int(rng.integers(3, 30)))
             for k in range(1, 41)]  # fmt: skip
    runs = [str(write_run(tmp_path / m, m, {n: bool(rng.random() < 0.5) for n in names}, bench=bench).path)
            for m in ("gpt-4o", "gpt-4.1", "o4-mini")]  # fmt: skip
    cli = CliRunner()
    out = cli.invoke(app, ["analyze", "regression", *runs, "--json", str(tmp_path / "r.json")], env={"COLUMNS": "80"})
    assert out.exit_code == 0, out.output
    data = json.loads((tmp_path / "r.json").read_text())
    assert data["reference_model"] == "gpt-4.1"  # the paper's reference, though the runs list gpt-4o first
    got = {c["name"]: c for c in data["coefficients"]}
    assert set(got) == {"const", *PREDICTORS, "model[gpt-4o]", "model[o4-mini]"}
    beside = {row[0]: row for row in data["paper"]["beside"]}
    assert beside["depth"][1:3] == ["0.8049", f"{got['depth']['coef']:.4f}"]  # the paper's, then this fit's
    assert beside["model[GPT-4o]"][1:3] == ["-0.4458", f"{got['model[gpt-4o]']['coef']:.4f}"]
    assert "Beside the paper's Table 5" in out.output and "model[o4-mini] is model[o4-mini] here" not in out.output
    assert "rows: here n = 120 (gpt-4o 40, gpt-4.1 40, o4-mini 40)" in out.output
    assert "the paper's standard errors imply" in out.output
    for switch in ("--reference", "--outcome tests|human", "--goal-lines", "--scale standardized|raw"):
        assert switch in out.output, switch
    raw = cli.invoke(app, ["analyze", "regression", *runs, "--scale", "raw", "--reference", "GPT-4o",
                           "--json", str(tmp_path / "raw.json")])  # fmt: skip
    assert raw.exit_code == 0, raw.output
    data_raw = json.loads((tmp_path / "raw.json").read_text())
    assert data_raw["reference_model"] == "gpt-4o" and data_raw["scale"] == "raw" and data_raw["scales"] == {}
    z_raw = {c["name"]: c["z"] for c in data_raw["coefficients"]}
    assert z_raw["goal_lines"] == pytest.approx(got["goal_lines"]["z"], rel=1e-6)  # units change coef, not z
    assert beside["model[GPT-4o]"][2] != "-" and "- │" in raw.output  # gpt-4o is the reference: no indicator to set


def test_a_run_that_gives_no_outcome_is_refused_or_named_never_dropped_in_silence(tmp_path) -> None:
    from typer.testing import CliRunner

    from lmrbench.benchmark.pipeline.rundir import RunDir
    from lmrbench.cli.main import app

    bench = tmp_path / "bench"
    names = [write_shaped_task(bench, k, nest=k % 3, root_files=k % 2, docs=k % 4, lines=3 + k) for k in range(1, 31)]
    rng = np.random.default_rng(3)
    full = write_run(tmp_path / "gpt-4.1", "gpt-4.1", {n: bool(rng.random() < 0.5) for n in names}, bench=bench)
    empty = write_run(tmp_path / "gpt-4o", "gpt-4o", dict.fromkeys(names, True), bench=bench)
    for path in (RunDir(empty.path).path / "results").rglob("*.json"):
        path.unlink()  # generated, never evaluated
    cli = CliRunner()
    out = cli.invoke(app, ["analyze", "regression", str(full.path), str(empty.path)])
    assert isinstance(out.exception, LmrError)  # the entry point prints it as one line and exits 2
    assert f"1 run(s) give the fit no outcome: {empty.path} (gpt-4o) holds no unit-test result" in str(out.exception)
    kept = cli.invoke(app, ["analyze", "regression", str(full.path), str(empty.path), "--drop-empty"],
                      env={"COLUMNS": "200"})  # fmt: skip
    assert kept.exit_code == 0, kept.output
    assert (f"note: left out {empty.path} (gpt-4o): it holds no unit-test result; the fit lost this model (one model "
            "is left: no model indicators)") in kept.output  # fmt: skip
