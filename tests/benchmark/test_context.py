"""Input settings (full, paper+goal-file, paper-only): what an export and a prompt hold, and what the run records."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from helpers.llm_server import LLMServer
from helpers.run_task import GOAL, METRICS_PY, REPO, golden_def, write_taskset
from lmrbench.authoring.task.mask import mask_source
from lmrbench.benchmark.pipeline.agent import export_agent, import_agent
from lmrbench.benchmark.pipeline.context import goal_stub
from lmrbench.benchmark.pipeline.generate import GenerateOptions, generate
from lmrbench.benchmark.pipeline.llm import LLMClient, LLMConfig
from lmrbench.benchmark.pipeline.rundir import RunDir
from lmrbench.benchmark.report.files import render_markdown
from lmrbench.benchmark.report.scoreboard import build_report, settings_table
from lmrbench.core.taskset import load_taskset
from lmrbench.schemas.run import LLMParams

GEN = "Functions to implement, in toy/metrics.py: "
EXE = str(Path(sys.executable).with_name("lmrbench"))


@pytest.fixture
def bench(tmp_path: Path) -> Path:
    return write_taskset(tmp_path / "bench")


def files_under(root: Path) -> list[str]:
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file())


def test_each_setting_exports_exactly_its_files(bench, tmp_path) -> None:
    tasks, _ = load_taskset(bench)
    listed = {}
    for setting in ("full", "paper+goal-file", "paper-only"):
        out = export_agent(tasks, tmp_path / setting, context=setting)
        listed[setting] = files_under(out)
        assert json.loads((out / "export.json").read_text())["context"] == setting
    per_task = {
        "full": ["TASK.md", f"{REPO}/paper.json", f"{REPO}/paper.pdf", f"{REPO}/toy/__init__.py", f"{REPO}/{GOAL}",
                 f"{REPO}/toy/utils.py"],
        "paper+goal-file": ["TASK.md", f"{REPO}/paper.json", f"{REPO}/paper.pdf", f"{REPO}/{GOAL}"],
        "paper-only": ["TASK.md", f"{REPO}/paper.json", f"{REPO}/paper.pdf", f"{REPO}/{GOAL}"],
    }  # fmt: skip
    for setting, rels in per_task.items():
        assert listed[setting] == sorted(["export.json", *(f"{t}/{r}" for t in ("1-Toy", "2-Async") for r in rels)])
    masked = (bench / "1-Toy" / REPO / GOAL).read_text()
    assert (tmp_path / "paper+goal-file" / "1-Toy" / REPO / GOAL).read_text() == masked
    stub = (tmp_path / "paper-only" / "1-Toy" / REPO / GOAL).read_text()
    # only the goal functions, signature and docstring, methods under their class header
    assert stub == goal_stub(masked, ["dice", "Scaler.apply"], file=GOAL)
    assert "def dice(a, b):" in stub and '"""Dice coefficient of two sets."""' in stub
    assert 'class Scaler:\n    """Scales vectors to a target norm."""\n\n    def apply(self, xs):' in stub
    for absent in ("import math", "_norm", "__init__", "async def total", "2 * len(a & b)"):
        assert absent not in stub
    assert "toy/utils.py" not in (tmp_path / "paper-only" / "1-Toy" / "TASK.md").read_text()
    assert "toy/utils.py" in (tmp_path / "full" / "1-Toy" / "TASK.md").read_text()
    compile(stub, GOAL, "exec")


def test_the_cli_takes_the_setting_and_refuses_an_unknown_one(bench, tmp_path) -> None:
    ok = subprocess.run([EXE, "export-agent", str(bench), "--out", str(tmp_path / "w"), "--context", "paper-only"],
                        capture_output=True, text=True)  # fmt: skip
    assert ok.returncode == 0, ok.stderr
    assert (tmp_path / "w" / "2-Async" / REPO / GOAL).read_text().startswith("async def total(xs):")
    bad = subprocess.run([EXE, "export-agent", str(bench), "--out", str(tmp_path / "x"), "--context", "repo"],
                         capture_output=True, text=True)  # fmt: skip
    assert bad.returncode == 2
    assert "unknown --context 'repo'; use one of full, paper+goal-file, paper-only" in bad.stderr
    assert not (tmp_path / "x").exists()


def _client(server: LLMServer, tmp_path: Path) -> LLMClient:
    params = LLMParams(model="gen-model", base_url=server.base_url, max_tokens=512)
    return LLMClient(LLMConfig(params=params, backoff=0.01, max_retries=1, cache_dir=tmp_path / "cache"))


def test_prompts_follow_the_setting_and_candidates_use_the_full_file(server, bench, tmp_path) -> None:
    for qual in ("dice", "Scaler.apply", "total"):
        server.on(GEN + qual, golden_def(qual))
    tasks, _ = load_taskset(bench, only=["1"])
    masked = (bench / "1-Toy" / REPO / GOAL).read_text()
    prompts = {}
    with _client(server, tmp_path) as client:
        for setting in ("full", "paper+goal-file", "paper-only"):
            before = len(server.requests)
            generate(tasks, tmp_path / setting, client, options=GenerateOptions(context=setting))
            prompts[setting] = [r.text for r in server.requests[before:] if GEN + "dice" in r.text][0]
            run = RunDir(tmp_path / setting)
            assert run.require_manifest().settings["context"] == setting
            cand = run.candidate("1-Toy", 1)
            assert cand is not None and cand.status.value == "ok"
            # the candidate is the whole masked file with the goal function spliced in, whatever was shown
            assert (run.candidate_dir("1-Toy", 1) / REPO / GOAL).read_text() == mask_source(
                METRICS_PY, ["Scaler.apply"], file=GOAL
            )
            assert masked != (run.candidate_dir("1-Toy", 1) / REPO / GOAL).read_text()
    assert "## toy/utils.py" in prompts["full"] and masked.strip() in prompts["full"]
    assert "## toy/utils.py" not in prompts["paper+goal-file"] and masked.strip() in prompts["paper+goal-file"]
    only = prompts["paper-only"]
    assert "## toy/utils.py" not in only and "import math" not in only and "def _norm" not in only
    assert goal_stub(masked, ["dice"], file=GOAL).strip() in only
    assert "Dice is 2|A&B|/(|A|+|B|)." in only
    assert RunDir(tmp_path / "paper-only").candidate("1-Toy", 1).prompt_version == "standard-3+paper-only"

    report = build_report([tmp_path / s for s in ("full", "paper+goal-file", "paper-only")])
    assert [r.context for r in report.rows] == ["full", "paper+goal-file", "paper-only"]
    table = settings_table(report)
    assert table is not None and table[0] == ["Setting", "Model", "Unit test acc. (%)"]  # no verdicts: no judge
    assert [row[:2] for row in table[1]] == [[s, "gen-model"] for s in ("full", "paper+goal-file", "paper-only")]
    assert "## By input setting (the paper's Table 3, %)" in render_markdown(report)


def test_import_records_the_exported_setting(bench, tmp_path) -> None:
    tasks, _ = load_taskset(bench)
    work = export_agent(tasks, tmp_path / "work", context="paper-only")
    for task in ("1-Toy", "2-Async"):  # the agent fills in the stubs (the golden file's defs here)
        (work / task / REPO / GOAL).write_text(METRICS_PY)
    summary = import_agent(tasks, work, tmp_path / "run", label="agent")
    assert summary.statuses["ok"] == 3
    run = RunDir(tmp_path / "run")
    assert run.require_manifest().settings == {"context": "paper-only"}
    spliced = (run.candidate_dir("1-Toy", 1) / REPO / GOAL).read_text()
    assert "import math" in spliced and "2 * len(a & b)" in spliced


def test_a_run_keeps_one_setting_and_older_runs_count_as_full(server, bench, tmp_path) -> None:
    from lmrbench.benchmark.pipeline.rundir import save_model
    from lmrbench.errors import LmrError

    for qual in ("dice", "Scaler.apply", "total"):
        server.on(GEN + qual, golden_def(qual))
    tasks, _ = load_taskset(bench, only=["2"])
    run = RunDir(tmp_path / "run")
    with _client(server, tmp_path) as client:
        generate(tasks, run.path, client)
        with pytest.raises(LmrError, match=r"other settings \(.*\); use another --out"):
            generate(tasks, run.path, client, options=GenerateOptions(context="paper-only"))
        # a run.json written before the setting existed has no "context": it is a full run
        old = run.require_manifest()
        save_model(run.path / "run.json", old.model_copy(update={"settings": {
            k: v for k, v in old.settings.items() if k != "context"}}))  # fmt: skip
        generate(tasks, run.path, client)
    assert build_report([run.path]).rows[0].context == "full"
