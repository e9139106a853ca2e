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
    assert bad.returncode == 2 and "too few data: 1 successes and 1 failures" in bad.stderr
    assert len(bad.stderr.strip().splitlines()) == 1
    human = subprocess.run([EXE, "analyze", "regression", str(few), "--outcome", "human"], capture_output=True,
                           text=True)  # fmt: skip
    assert human.returncode == 2 and "no observation with a human outcome" in human.stderr


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
