"""Familiarity scores over real HTTP against the loopback server scripted with known logprobs."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from helpers.llm_server import logprobs
from helpers.synthetic_runs import golden_source, write_run, write_shaped_task

EXE = str(Path(sys.executable).with_name("lmrbench"))
LN = math.log


@pytest.fixture
def bench(tmp_path: Path) -> Path:
    bench = tmp_path / "bench"
    for k, lines in ((1, 4), (2, 6), (3, 8)):
        write_shaped_task(bench, k, nest=1, root_files=0, docs=0, lines=lines)
    return bench


def analyze(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([EXE, "analyze", "familiarity", *args], capture_output=True, text=True, timeout=120)


def test_mean_token_probability_and_correlation(server, bench, tmp_path) -> None:
    # the first token has no context (None); the others have known probabilities
    server.on(golden_source(4), logprobs([("import", None), (" math", LN(0.5)), ("\n", LN(0.25)), ("def", LN(1.0))]))
    server.on(golden_source(6), logprobs([("import", None), (" math", LN(0.1)), ("\n", LN(0.3))]))
    server.on(golden_source(8), logprobs([("import", None), (" math", LN(0.9))]))
    write_run(tmp_path / "a", "a", {"1-T1": True, "2-T2": False, "3-T3": True})
    write_run(tmp_path / "b", "b", {"1-T1": True, "2-T2": False, "3-T3": False})
    out = analyze(str(bench), "--model", "m", "--base-url", server.base_url, "--run", str(tmp_path / "a"),
                  "--run", str(tmp_path / "b"), "--json", str(tmp_path / "fam.json"))  # fmt: skip
    assert out.returncode == 0, out.stderr
    data = json.loads((tmp_path / "fam.json").read_text())
    rows = {r["task"]: r for r in data["tasks"]}
    assert rows["1-T1"]["mean_prob"] == pytest.approx((0.5 + 0.25 + 1.0) / 3)
    assert rows["2-T2"]["mean_prob"] == pytest.approx((0.1 + 0.3) / 2)
    assert rows["3-T3"]["mean_prob"] == pytest.approx(0.9)
    assert rows["1-T1"]["tokens"] == 3 and rows["1-T1"]["files"] == ["golden_files/goal_golden.py"]
    assert rows["1-T1"]["mean_logprob"] == pytest.approx((LN(0.5) + LN(0.25)) / 3)
    assert [rows[t]["success"] for t in ("1-T1", "2-T2", "3-T3")] == [1.0, 0.0, 0.5]
    fam = [7 / 12, 0.2, 0.9]
    corr = data["correlation"]
    assert corr["pearson"] == pytest.approx(np.corrcoef(fam, [1.0, 0.0, 0.5])[0, 1])
    assert corr["spearman"] == pytest.approx(0.5)  # ranks (2, 1, 3) against (3, 1, 2)
    assert "0.5833" in out.stdout and "Spearman rho = 0.500" in out.stdout
    sent = server.requests[0].body
    assert (sent["echo"], sent["logprobs"], sent["max_tokens"], sent["model"]) == (True, 1, 1, "m")


def test_an_endpoint_without_prompt_logprobs_is_refused_in_one_line(server, bench) -> None:
    server.on("import math", "just text")  # a completion with no logprobs at all
    out = analyze(str(bench), "--model", "m", "--base-url", server.base_url)
    assert out.returncode == 1 and "the endpoint returned no logprobs" in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1
    server.on("import math", logprobs([("import", None), (" math", -0.1)], generated_only=True))
    out = analyze(str(bench), "--model", "m", "--base-url", server.base_url)
    assert out.returncode == 1 and "logprobs for the generated tokens only" in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1
