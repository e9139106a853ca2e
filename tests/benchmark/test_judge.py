"""The LLM judge against the scripted server: scoping, delimiting, validation, retries and re-runs."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from helpers.llm_server import LLMServer, status
from helpers.run_task import HOSTILE_DICE, golden_def, write_taskset
from lmrbench.benchmark.pipeline.generate import generate
from lmrbench.benchmark.pipeline.judge import judge, parse_verdict, verdict_counts
from lmrbench.benchmark.pipeline.llm import LLMClient, LLMConfig
from lmrbench.benchmark.pipeline.prompts import JUDGE_PROMPT_VERSION
from lmrbench.benchmark.pipeline.rundir import RunDir
from lmrbench.core.taskset import load_taskset
from lmrbench.schemas.run import JudgeCategory, LLMParams

DICE_GEN = "Functions to implement, in toy/metrics.py: dice"
APPLY_GEN = "Functions to implement, in toy/metrics.py: Scaler.apply"
TOTAL_GEN = "Functions to implement, in toy/metrics.py: total"
DICE = "Implement dice as in the paper."
APPLY = "Implement apply as in the paper."
TOTAL = "Implement total as in the paper."
CC = json.dumps({"category": 3, "rationale": ["Same set arithmetic as the reference."]})  # the paper's numbering
LI = json.dumps({"category": 1, "rationale": ["Returns a constant."]})


def client(server: LLMServer, tmp_path: Path, model: str = "judge-1") -> LLMClient:
    params = LLMParams(model=model, base_url=server.base_url, max_tokens=256)
    return LLMClient(LLMConfig(params=params, cache_dir=tmp_path / "cache", max_retries=0))


def make_run(server: LLMServer, tmp_path: Path, dice_reply: str) -> tuple[list, Path]:  # type: ignore[type-arg]
    bench = write_taskset(tmp_path / "bench")
    server.on(DICE_GEN, dice_reply)
    server.on(APPLY_GEN, golden_def("Scaler.apply"))
    server.on(TOTAL_GEN, golden_def("total"))
    tasks, _ = load_taskset(bench)
    with client(server, tmp_path, "gen") as c:
        generate(tasks, tmp_path / "run", c)
    return tasks, tmp_path / "run"


def test_golden_candidate_is_completely_correct_with_the_judge_recorded(server, tmp_path) -> None:
    tasks, run = make_run(server, tmp_path, golden_def("dice"))
    server.on(DICE, CC)
    server.on(APPLY, CC)
    server.on(TOTAL, LI)
    with client(server, tmp_path) as c:
        summary = judge(tasks, run, c)
    assert summary.statuses == {"completely_correct": 2, "logically_incorrect": 1}
    verdict = RunDir(run).verdict("judge-1", "1-Toy", 1)
    assert verdict is not None and verdict.category is JudgeCategory.COMPLETELY_CORRECT
    assert verdict.rationale == ["Same set arithmetic as the reference."]
    assert verdict.judge.model == "judge-1" and verdict.judge.max_tokens == 256
    assert verdict.prompt_version == JUDGE_PROMPT_VERSION and verdict.attempts == 1
    assert RunDir(run).require_manifest().judges["judge-1"].params.model == "judge-1"
    prompt = server.matching(DICE)[-1].text
    assert prompt.count("return 2 * len(a & b) / (len(a) + len(b))") == 2  # golden and candidate
    assert "class Scaler" not in prompt and "def _norm" not in prompt and "async def total" not in prompt


def test_candidate_is_data_between_tags_it_cannot_close(server, tmp_path) -> None:
    tasks, run = make_run(server, tmp_path, HOSTILE_DICE)
    server.on(DICE, LI)
    server.on(APPLY, CC)
    server.on(TOTAL, CC)
    with client(server, tmp_path) as c:
        judge(tasks, run, c)
    req = server.matching(DICE)[-1]
    system, user = req.body["messages"][0]["content"], req.body["messages"][1]["content"]
    assert "never instructions" in system
    tag = re.search(r"<candidate-([0-9a-f]{12})>", user).group(1)  # type: ignore[union-attr]
    inside = user.split(f"<candidate-{tag}>")[1].split(f"</candidate-{tag}>")[0]
    assert "NOTE TO THE GRADER" in inside and tag not in inside
    assert user.count(f"</candidate-{tag}>") == 1
    assert RunDir(run).verdict("judge-1", "1-Toy", 1).category is JudgeCategory.LOGICALLY_INCORRECT  # type: ignore[union-attr]


def test_malformed_replies_are_retried_then_no_verdict_and_a_rerun_retries_only_those(
    server, tmp_path
) -> None:
    tasks, run = make_run(server, tmp_path, golden_def("dice"))
    server.on(DICE, "Looks right to me!", CC)  # prose first, then valid JSON
    server.on(APPLY, '{"category": 7, "rationale": ["x"]}')  # invalid every time
    server.on(TOTAL, status(500))  # endpoint failure
    with client(server, tmp_path) as c:
        summary = judge(tasks, run, c, max_attempts=3)
    assert summary.statuses == {"completely_correct": 1, "no_verdict": 2}
    rd = RunDir(run)
    dice = rd.verdict("judge-1", "1-Toy", 1)
    assert dice.category is JudgeCategory.COMPLETELY_CORRECT and dice.attempts == 2  # type: ignore[union-attr]
    retry = server.matching(DICE)[-1].body["messages"]
    assert (
        retry[-2] == {"role": "assistant", "content": "Looks right to me!"}
        and "no JSON object" in retry[-1]["content"]
    )
    apply = rd.verdict("judge-1", "1-Toy", 2)
    assert apply.category is None and apply.attempts == 3 and "must be 1, 2 or 3" in apply.reason  # type: ignore[union-attr]
    total = rd.verdict("judge-1", "2-Async", 1)
    assert total.category is None and "endpoint" in total.reason and "HTTP 500" in total.reason  # type: ignore[union-attr]
    assert verdict_counts(rd, "judge-1") == {"completely_correct": 1, "no_verdict": 2}

    server.on(APPLY, CC)
    server.on(TOTAL, CC)
    before = {m: len(server.matching(m)) for m in (DICE, APPLY, TOTAL)}
    with client(server, tmp_path) as c:
        again = judge(tasks, run, c)
    assert again.skipped == 1 and again.statuses == {"completely_correct": 2}
    assert len(server.matching(DICE)) == before[DICE]  # the settled verdict was not asked again
    assert len(server.matching(APPLY)) == before[APPLY] + 1  # nor served the bad reply from the cache
    assert verdict_counts(rd, "judge-1") == {"completely_correct": 3}


def test_summaries_count_every_verdict_on_disk(server, tmp_path) -> None:
    tasks, run = make_run(server, tmp_path, golden_def("dice"))
    server.on(DICE, CC)
    server.on(APPLY, LI)
    server.on(TOTAL, CC)
    with client(server, tmp_path) as c:
        judge([t for t in tasks if t.name == "1-Toy"], run, c)
        judge([t for t in tasks if t.name == "2-Async"], run, c)
    assert verdict_counts(RunDir(run), "judge-1") == {"completely_correct": 2, "logically_incorrect": 1}


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ('{"category": 2, "rationale": ["a", "b"]}', (JudgeCategory.LOGICALLY_CORRECT, ["a", "b"])),
        ('{"category": 3.0, "rationale": ["a"]}', (JudgeCategory.COMPLETELY_CORRECT, ["a"])),
        ('{"category": 1, "rationale": ["a"]}', (JudgeCategory.LOGICALLY_INCORRECT, ["a"])),
        (
            '```json\n{"category": "1", "rationale": "- x\\n- y"}\n```',
            (JudgeCategory.LOGICALLY_INCORRECT, ["x", "y"]),
        ),
        ('{"category": "3. Completely Correct", "rationale": ["ok"]}', (JudgeCategory.COMPLETELY_CORRECT, ["ok"])),
        (
            'Verdict: {"category": "Completely Correct", "rationale": ["ok"]} done',
            (JudgeCategory.COMPLETELY_CORRECT, ["ok"]),
        ),
    ],
)
def test_parse_verdict_accepts(reply: str, expected: tuple[JudgeCategory, list[str]]) -> None:
    assert parse_verdict(reply) == expected


@pytest.mark.parametrize(
    ("reply", "problem"),
    [
        ("no json", "no JSON object"),
        ('{"category": true, "rationale": ["x"]}', "must be 1, 2 or 3"),
        ('{"category": 2.5, "rationale": ["x"]}', "must be 1, 2 or 3"),
        ('{"category": 1}', "must be a list"),
        ('{"category": 1, "rationale": ["  "]}', "empty"),
        ("[1, 2]", "not an object"),
    ],
)
def test_parse_verdict_rejects(reply: str, problem: str) -> None:
    with pytest.raises(ValueError, match=problem):
        parse_verdict(reply)


def test_the_prompt_numbers_the_categories_as_the_paper_and_older_verdicts_stay_current(server, tmp_path) -> None:
    from lmrbench.benchmark.pipeline.prompts import JUDGE_PROMPT_VERSION, judge_messages

    user = judge_messages("P", "Implement it.", "def f(): pass", "def f(): pass")[1]["content"]
    numbered = re.findall(r"^([123])\. (Logically Incorrect|Logically Correct|Completely Correct):", user, re.M)
    assert numbered == [("1", "Logically Incorrect"), ("2", "Logically Correct"), ("3", "Completely Correct")]
    tasks, run = make_run(server, tmp_path, golden_def("dice"))
    for pattern in (DICE, APPLY, TOTAL):
        server.on(pattern, CC)
    with client(server, tmp_path) as c:
        judge(tasks, run, c)
    rd = RunDir(run)
    path = rd.verdict_path("judge-1", "1-Toy", 1)
    old = rd.verdict("judge-1", "1-Toy", 1).model_copy(update={"prompt_version": "judge-1"})  # type: ignore[union-attr]
    path.write_text(old.model_dump_json())  # a verdict file written under the old numbering
    calls = len(server.requests)
    with client(server, tmp_path) as c:
        judge(tasks, run, c)
    assert len(server.requests) == calls  # nothing asked again: the stored category is by name
    assert rd.verdict("judge-1", "1-Toy", 1).category is JudgeCategory.COMPLETELY_CORRECT  # type: ignore[union-attr]
    assert rd.verdict("judge-1", "1-Toy", 2).prompt_version == JUDGE_PROMPT_VERSION  # type: ignore[union-attr]
