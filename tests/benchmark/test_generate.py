"""Standard prompting against the scripted server: prompts, candidates, faults and re-runs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from helpers.llm_server import LLMServer, status
from helpers.run_task import GOAL, HELPER_REPLY, METRICS_PY, REPO, WRONG_DICE, golden_def, write_taskset
from lmrbench.benchmark.pipeline.generate import GenerateOptions, attempts, generate
from lmrbench.benchmark.pipeline.llm import LLMClient, LLMConfig
from lmrbench.benchmark.pipeline.prompts import truncate_paper
from lmrbench.benchmark.pipeline.reply import ReplyProblem, splice_reply
from lmrbench.benchmark.pipeline.rundir import RunDir
from lmrbench.core.taskset import load_taskset
from lmrbench.errors import LmrError
from lmrbench.schemas.run import CandidateStatus, LLMParams

DICE = "Functions to implement, in toy/metrics.py: dice"
APPLY = "Functions to implement, in toy/metrics.py: Scaler.apply"
TOTAL = "Functions to implement, in toy/metrics.py: total"


@pytest.fixture
def bench(tmp_path: Path) -> Path:
    return write_taskset(tmp_path / "bench")


def client_for(server: LLMServer, tmp_path: Path, model: str = "gen-model") -> LLMClient:
    params = LLMParams(model=model, base_url=server.base_url, max_tokens=512)
    return LLMClient(LLMConfig(params=params, backoff=0.01, max_retries=1, cache_dir=tmp_path / "cache"))


def script_golden(server: LLMServer) -> None:
    server.on(DICE, golden_def("dice"))
    server.on(APPLY, golden_def("Scaler.apply"))
    server.on(TOTAL, golden_def("total"))


def test_golden_replies_become_spliced_candidates(server, bench, tmp_path) -> None:
    script_golden(server)
    tasks, problems = load_taskset(bench)
    assert not problems
    with client_for(server, tmp_path) as client:
        summary = generate(tasks, tmp_path / "run", client, bench=str(bench))
    assert summary.statuses == {"ok": 3}
    run = RunDir(tmp_path / "run")
    cand = run.candidate("1-Toy", 2)
    assert cand is not None and cand.status is CandidateStatus.OK and cand.functions == ["Scaler.apply"]
    assert cand.model == "gen-model" and cand.usage.prompt_tokens > 0 and cand.usage.completion_tokens > 0
    folder = run.candidate_dir("1-Toy", 2)
    assert "```python" in (folder / "reply.txt").read_text()
    text = (folder / REPO / GOAL).read_text()
    assert "return [x * self.target / n for x in xs]" in text
    assert "# The paper's Equation 3." in text  # comments elsewhere survive
    assert "raise NotImplementedError" in text.split("class Scaler")[0]  # dice stays masked in impl 2's file
    assert (run.candidate_dir("2-Async", 1) / REPO / GOAL).read_text().count("async def total") == 1
    manifest = run.require_manifest()
    assert manifest.generation is not None and manifest.generation.model == "gen-model"
    assert [t.name for t in manifest.tasks] == ["1-Toy", "2-Async"] and all(
        len(t.digest) == 64 for t in manifest.tasks
    )


def test_prompt_has_goal_file_paper_instruction_context_and_no_golden_body(server, bench, tmp_path) -> None:
    script_golden(server)
    tasks, _ = load_taskset(bench, only=["1"])
    with client_for(server, tmp_path) as client:
        generate(tasks, tmp_path / "run", client)
    prompt = server.matching(DICE)[0].text
    masked = (bench / "1-Toy" / REPO / GOAL).read_text()
    assert masked.strip() in prompt
    assert "Implement dice as in the paper." in prompt
    assert "Dice is 2|A&B|/(|A|+|B|)." in prompt and "## toy/utils.py" in prompt
    assert "2 * len(a & b)" not in prompt and "x * self.target / n" not in prompt


def test_faults_are_recorded_and_a_rerun_retries_only_them(server, bench, tmp_path) -> None:
    server.on(DICE, status(500))
    server.on(APPLY, "I would rather not write code today.")
    server.on(TOTAL, "```python\nasync def total(xs:\n    return 1\n```")
    tasks, _ = load_taskset(bench)
    with client_for(server, tmp_path) as client:
        summary = generate(tasks, tmp_path / "run", client)
    assert summary.statuses == {"llm_error": 1, "no_function": 1, "parse_error": 1}
    run = RunDir(tmp_path / "run")
    reasons = {(c.task, c.impl): (c.status.value, c.reason) for c in run.candidates()}
    assert reasons[("1-Toy", 1)][0] == "llm_error" and "HTTP 500" in reasons[("1-Toy", 1)][1]
    assert reasons[("1-Toy", 2)][0] == "no_function" and "Scaler.apply" in reasons[("1-Toy", 2)][1]
    assert reasons[("2-Async", 1)][0] == "parse_error" and "never closed" in reasons[("2-Async", 1)][1]
    assert not (run.candidate_dir("1-Toy", 1) / REPO).exists()

    script_golden(server)
    before = len(server.requests)
    with client_for(server, tmp_path) as client:
        again = generate(tasks, tmp_path / "run", client)
    assert again.statuses == {"ok": 1} and again.skipped == 2  # replies without usable code are answers
    assert len(server.requests) - before == 1
    with client_for(server, tmp_path) as client:
        third = generate(tasks, tmp_path / "run", client, options=GenerateOptions(retry_failed=True))
    assert third.statuses == {"ok": 2} and third.skipped == 1
    assert len(server.requests) - before == 3  # asked for again: new samples, not the cached replies
    # every attempt is kept, the rejected replies word for word, though the candidate holds the last one only
    log = attempts(run, "1-Toy", 2)
    assert [a["status"] for a in log] == ["no_function", "ok"]
    assert log[0]["reply"] == "I would rather not write code today." and "Scaler.apply" in str(log[0]["reason"])
    assert "def apply" in str(log[1]["reply"]) and log[1]["requests"] == 1 and log[1]["completion_tokens"]
    assert [a["status"] for a in attempts(run, "2-Async", 1)] == ["parse_error", "ok"]
    assert "async def total(xs:" in str(attempts(run, "2-Async", 1)[0]["reply"])
    failed = attempts(run, "1-Toy", 1)[0]
    assert failed["status"] == "llm_error" and failed["reply"] is None and "after 2 attempts" in str(failed["reason"])
    assert "I would rather" not in (run.candidate_dir("1-Toy", 2) / "reply.txt").read_text()


def test_a_run_folder_refuses_another_model_or_settings(server, bench, tmp_path) -> None:
    script_golden(server)
    tasks, _ = load_taskset(bench, only=["2"])
    with client_for(server, tmp_path) as client:
        generate(tasks, tmp_path / "run", client)
    with (
        client_for(server, tmp_path, model="other") as client,
        pytest.raises(LmrError, match="another --out"),
    ):
        generate(tasks, tmp_path / "run", client)
    with client_for(server, tmp_path) as client, pytest.raises(LmrError, match="another --out"):
        generate(tasks, tmp_path / "run", client, options=GenerateOptions(max_paper_chars=10))


def test_new_imports_helpers_and_constants_of_the_reply_are_kept_beside_the_goal_function(
    server, bench, tmp_path
) -> None:
    server.on(TOTAL, HELPER_REPLY)
    tasks, _ = load_taskset(bench, only=["2"])
    with client_for(server, tmp_path) as client:
        generate(tasks, tmp_path / "run", client)
    kept = (RunDir(tmp_path / "run").candidate_dir("2-Async", 1) / REPO / GOAL).read_text()
    assert kept.count("import statistics\n") == 1 and kept.count("def _mean(xs):") == 1
    assert kept.index("def _mean") < kept.index("async def total")
    cand = RunDir(tmp_path / "run").candidate("2-Async", 1)
    assert cand is not None and cand.helpers == ["import statistics", "def _mean"]
    assert cand.reason == "code from block 1 of 1"


def test_a_reply_cut_at_max_tokens_says_so(server, bench, tmp_path) -> None:
    from helpers.llm_server import reply

    server.on(TOTAL, reply("```python\nasync def total(xs):\n    return sum(", finish_reason="length"))
    tasks, _ = load_taskset(bench, only=["2"])
    with client_for(server, tmp_path) as client:
        generate(tasks, tmp_path / "run", client)
    cand = RunDir(tmp_path / "run").candidate("2-Async", 1)
    assert cand is not None and cand.status is CandidateStatus.PARSE_ERROR
    assert "cut at --max-tokens 512" in cand.reason


def test_reply_parsing_edge_cases() -> None:
    masked = METRICS_PY.replace("return sum(xs)", "raise NotImplementedError")
    # a bare method is placed in its class; an unclosed fence runs to the end
    out = splice_reply("```py\ndef apply(self, xs):\n    return xs\n", masked, ["Scaler.apply"], file=GOAL)
    assert "    def apply(self, xs):\n        return xs\n" in out.source
    # a draft, then "the final version": the last complete block that defines the function wins
    two = "```python\ndef dice(a, b):\n    return 1\n```\nFinal version:\n```python\nEPS = 2\n\n" \
        "def dice(a, b):\n    return EPS\n```\n```python\nprint(dice({1}, {1}))\n```"
    out = splice_reply(two, masked, ["dice"], file=GOAL)
    assert "return EPS" in out.source and "EPS = 2\n" in out.source and "return 1" not in out.source
    assert (out.blocks, out.total_blocks, out.helpers) == ([2], 3, ["EPS = 2"])
    # a closed block wins over a later one that was cut off
    cut = two + "\n```python\ndef dice(a, b):\n    return 3\n"
    assert "return EPS" in splice_reply(cut, masked, ["dice"], file=GOAL).source
    with pytest.raises(ReplyProblem) as err:
        splice_reply(WRONG_DICE, masked, ["dice", "total"], file=GOAL)
    assert err.value.status == "no_function" and "total" in err.value.reason


def test_paper_truncation_rule() -> None:
    pages = {"2": "b" * 60, "1": "a" * 60, "10": "c" * 60}
    whole = truncate_paper(pages, 1000)
    assert (
        json.loads(whole.text) == {"1": "a" * 60, "2": "b" * 60, "10": "c" * 60} and whole.chars_omitted == 0
    )
    cut = truncate_paper(pages, 100)
    body, note = cut.text.rsplit("\n", 1)
    assert json.loads(body) == {"1": "a" * 60, "2": "b" * 40}
    assert (cut.pages_omitted, cut.chars_omitted) == (1, 80) and "1 later page(s) and 80 characters" in note
