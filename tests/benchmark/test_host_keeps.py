"""The host keeps what it handed out and a score moves only when the model's answer does: import-agent grades
every task in the setting export-agent recorded here (an edited export.json changes neither), a reply without
code is the model's answer for that sample, each stage exits 3 with problems left, and run.json says what made
the run and refuses a re-run with other settings."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from helpers.llm_server import LLMServer, status
from helpers.run_task import GOAL, REPO, golden_def, write_taskset
from lmrbench.benchmark.pipeline.agent import export_agent, import_agent
from lmrbench.benchmark.pipeline.generate import GenerateOptions, generate
from lmrbench.benchmark.pipeline.llm import LLMClient, LLMConfig
from lmrbench.benchmark.pipeline.rundir import RunDir, save_model
from lmrbench.benchmark.report.scoreboard import build_report
from lmrbench.cli.main import app
from lmrbench.core.taskset import load_taskset
from lmrbench.errors import LmrError
from lmrbench.schemas.agent_run import AgentOutcome, AgentStatus
from lmrbench.schemas.run import LLMParams, RunManifest

DICE = "Functions to implement, in toy/metrics.py: dice"
APPLY = "Functions to implement, in toy/metrics.py: Scaler.apply"
TOTAL = "Functions to implement, in toy/metrics.py: total"
REFUSAL = "I am sorry, but I cannot help with implementing this function."


def _solve_total(agent: Path) -> None:
    goal = agent / "2-Async" / REPO / GOAL
    goal.write_text(goal.read_text().replace("raise NotImplementedError", "return sum(xs)"))


def test_an_edited_export_json_changes_neither_the_tasks_graded_nor_the_setting(tmp_path: Path) -> None:
    tasks, _ = load_taskset(write_taskset(tmp_path / "bench"))
    agent = export_agent(tasks, tmp_path / "agent", context="paper+goal-file")
    _solve_total(agent)
    export = agent / "export.json"
    data = json.loads(export.read_text())
    export.write_text(json.dumps({**data, "tasks": ["2-Async"], "context": "paper-only"}))  # the agent's edit
    summary = import_agent(tasks, agent, tmp_path / "run")
    run = RunDir(tmp_path / "run")
    manifest = run.require_manifest()
    assert manifest.settings["context"] == "paper+goal-file"
    assert manifest.export is not None and manifest.export.tasks == ["1-Toy", "2-Async"]
    assert set(manifest.export.digests) == {"1-Toy", "2-Async"}
    assert {(c.task, c.impl) for c in run.candidates()} == {("1-Toy", 1), ("1-Toy", 2), ("2-Async", 1)}
    assert summary.statuses == {"ok": 3}  # the stubs the agent left are code, graded by the tests


def test_a_task_the_agents_folder_lacks_is_a_wrong_answer_unless_only_exported(tmp_path: Path) -> None:
    tasks, _ = load_taskset(write_taskset(tmp_path / "bench"))
    agent = export_agent([t for t in tasks if t.name == "2-Async"], tmp_path / "agent")
    _solve_total(agent)
    summary = import_agent(tasks, agent, tmp_path / "all")
    assert summary.statuses == {"ok": 1, "no_function": 2}
    assert any("has no such task" in n for n in summary.notes)
    assert len(list(RunDir(tmp_path / "all").candidates())) == 3  # each in the denominator
    only = import_agent(tasks, agent, tmp_path / "only", only_exported=True)
    assert only.statuses == {"ok": 1}
    assert {c.task for c in RunDir(tmp_path / "only").candidates()} == {"2-Async"}


def test_an_export_this_machine_has_no_record_of_needs_the_setting_said(tmp_path: Path) -> None:
    tasks, _ = load_taskset(write_taskset(tmp_path / "bench"), only=["2"])
    agent = export_agent(tasks, tmp_path / "agent")
    export = agent / "export.json"
    export.write_text(json.dumps({**json.loads(export.read_text()), "export_id": "0" * 32}))
    with pytest.raises(LmrError, match="pass --context"):
        import_agent(tasks, agent, tmp_path / "run")
    with pytest.raises(LmrError, match="--only-exported needs"):
        import_agent(tasks, agent, tmp_path / "run", context="full", only_exported=True)
    import_agent(tasks, agent, tmp_path / "run", context="paper-only")
    assert RunDir(tmp_path / "run").require_manifest().settings["context"] == "paper-only"


def _generate(server: LLMServer, bench: Path, run: Path, **options: object) -> object:
    tasks, _ = load_taskset(bench)
    params = LLMParams(model="m", base_url=server.base_url)
    with LLMClient(LLMConfig(params=params, cache_dir=run.parent / "cache", max_retries=0)) as client:
        return generate(tasks, run, client, options=GenerateOptions(**options))  # type: ignore[arg-type]


def test_a_refusal_is_the_models_answer_and_a_rerun_never_asks_again(server, tmp_path: Path) -> None:
    bench = write_taskset(tmp_path / "bench")
    run = tmp_path / "run"
    server.on(DICE, REFUSAL, golden_def("dice"))  # asked again, the model would give the right answer
    server.on(APPLY, status(503), golden_def("Scaler.apply"))
    server.on(TOTAL, golden_def("total"))
    first = _generate(server, bench, run)
    assert first.statuses == {"no_function": 1, "llm_error": 1, "ok": 1}  # type: ignore[attr-defined]
    second = _generate(server, bench, run)
    assert second.statuses == {"ok": 1} and second.skipped == 2  # type: ignore[attr-defined]
    assert len(server.matching(DICE)) == 1  # the refusal stands: pass@1 stays pass@1
    cand = RunDir(run).candidate("1-Toy", 1)
    assert cand is not None and cand.status.value == "no_function"
    assert (RunDir(run).candidate_dir("1-Toy", 1) / "reply.txt").read_text() == REFUSAL
    third = _generate(server, bench, run, retry_failed=True)  # asked for: a new sample, the old one kept
    assert third.statuses == {"ok": 1} and len(server.matching(DICE)) == 2  # type: ignore[attr-defined]
    kept = run / "attempts" / "1-Toy" / "1" / "1"
    assert (kept / "reply.txt").read_text() == REFUSAL and (kept / "candidate.json").is_file()


def test_run_json_says_what_made_the_run_and_refuses_other_settings_unless_forced(server, tmp_path: Path) -> None:
    bench = write_taskset(tmp_path / "bench")
    run = tmp_path / "run"
    for match in (DICE, APPLY, TOTAL):
        server.on(match, golden_def("total"))
    base = ["generate", str(bench), "--out", str(run), "--model", "m", "--base-url", server.base_url,
            "--no-cache", "--retries", "0"]
    assert CliRunner().invoke(app, base).exit_code == 0
    manifest = RunDir(run).require_manifest()
    assert manifest.started_at and manifest.ended_at >= manifest.started_at
    assert len(manifest.taskset_digest) == 64 and manifest.tool_version
    assert manifest.git_revision == "" or len(manifest.git_revision) == 40
    other = CliRunner().invoke(app, [*base, "--temperature", "0.7"])
    assert other.exit_code == 1 and "(temperature: 0.0 -> 0.7); use another --out, or --force" in str(other.exception)
    forced = CliRunner().invoke(app, [*base, "--temperature", "0.7", "--force"])
    assert forced.exit_code == 0, forced.output
    assert RunDir(run).require_manifest().generation.temperature == 0.7  # type: ignore[union-attr]
    aside = [p for p in tmp_path.iterdir() if p.name.startswith("run.replaced-")]
    assert len(aside) == 1 and RunDir(aside[0]).require_manifest().generation.temperature == 0.0  # type: ignore[union-attr]


def test_each_stage_exits_3_with_infrastructure_errors_left(server, tmp_path: Path) -> None:
    bench = write_taskset(tmp_path / "bench")
    run = tmp_path / "run"
    server.on(DICE, status(503))
    server.on(APPLY, golden_def("Scaler.apply"))
    server.on(TOTAL, REFUSAL)  # a wrong answer is no problem left
    out = CliRunner().invoke(app, ["generate", str(bench), "--out", str(run), "--model", "m", "--base-url",
                                   server.base_url, "--no-cache", "--retries", "0"])
    assert out.exit_code == 3, out.output
    judged = CliRunner().invoke(app, ["judge", str(bench), str(run), "--model", "j", "--base-url", server.base_url,
                                      "--no-cache", "--retries", "0", "--attempts", "1"])
    assert judged.exit_code == 3, judged.output  # the judge's endpoint answers 404 here: no verdict


def test_an_agent_task_whose_endpoint_was_down_is_an_infrastructure_error_not_pending(tmp_path: Path) -> None:
    tasks, _ = load_taskset(write_taskset(tmp_path / "bench"), only=["2"])
    run = RunDir(tmp_path / "run")
    from lmrbench.benchmark.pipeline.manifest import start_manifest

    start_manifest(run, tasks, RunManifest(tool_version="t", source="agent", settings={"context": "full"}))
    save_model(run.path / "agent" / "2-Async" / "outcome.json",
               AgentOutcome(task="2-Async", agent="a", model="m", status=AgentStatus.INFRA_ERROR, reason="down"))
    row = build_report([run.path]).rows[0]
    assert (row.infra_errors, row.pending) == (1, 0)
