"""One ``--model`` spelling for any provider: ``lmrbench generate`` and ``judge`` through litellm against a server on
127.0.0.1 that speaks both OpenAI's chat completions and Anthropic's messages."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from helpers.llm_server import LLMServer, status
from helpers.run_task import golden_def, write_taskset
from lmrbench.benchmark.pipeline.rundir import RunDir
from lmrbench.cli.main import app
from lmrbench.schemas.run import CandidateStatus, JudgeCategory

pytestmark = pytest.mark.xdist_group("litellm")  # litellm's import (8 s of CPU) paid by one worker

DICE_GEN = "Functions to implement, in toy/metrics.py: dice"
APPLY_GEN = "Functions to implement, in toy/metrics.py: Scaler.apply"
TOTAL_GEN = "Functions to implement, in toy/metrics.py: total"
CC = json.dumps({"category": 3, "rationale": ["Same arithmetic as the reference."]})


def lmrbench(*args: object) -> str:
    result = CliRunner().invoke(app, [str(a) for a in args], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


def script(server: LLMServer) -> None:
    # each first answer is a 429 with Retry-After or a 503: the retries hold whatever the protocol
    server.on(DICE_GEN, status(429, retry_after="0.2"), golden_def("dice"))
    server.on(APPLY_GEN, status(503), golden_def("Scaler.apply"))
    server.on(TOTAL_GEN, golden_def("total"))


@pytest.mark.parametrize(
    ("gen", "judge", "path", "key_header"),
    [
        ("openai/gen-1", "openai/judge-1", "/v1/chat/completions", "Authorization"),
        ("anthropic/claude-gen", "anthropic/claude-judge", "/v1/messages", "x-api-key"),
    ],
)
def test_generate_and_judge_reach_either_protocol_with_the_providers_spelling(
    server: LLMServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, gen: str, judge: str, path: str,
    key_header: str,
) -> None:
    monkeypatch.setenv("TEST_PROVIDER_KEY", "sekret")
    script(server)
    bench, run = write_taskset(tmp_path / "bench"), tmp_path / "run"
    # an OpenAI-compatible base URL ends in /v1; Anthropic's is the server's root
    url = server.base_url if path.endswith("completions") else server.base_url.removesuffix("/v1")
    common = ["--base-url", url, "--api-key-env", "TEST_PROVIDER_KEY", "--cache-dir", tmp_path / "cache",
              "--retries", "2"]
    lmrbench("generate", bench, "--out", run, "--model", gen, *common)
    asked = len(server.requests)
    server.on("Implement", status(503), status(503), CC)  # the judge's prompts, newest rule first
    out = lmrbench("judge", bench, run, "--model", judge, *common)
    assert "completely_correct" in out, out

    rd = RunDir(run)
    cands = sorted(rd.candidates(), key=lambda c: (c.task, c.impl))
    assert [(c.task, c.impl, c.status) for c in cands] == [
        ("1-Toy", 1, CandidateStatus.OK), ("1-Toy", 2, CandidateStatus.OK), ("2-Async", 1, CandidateStatus.OK)]
    assert all(c.usage.prompt_tokens > 0 and c.usage.completion_tokens > 0 for c in cands)
    generation = rd.require_manifest().generation
    assert generation is not None and (generation.model, generation.base_url) == (gen, url)
    [name] = rd.judges()
    verdicts = rd.verdicts(name)
    assert len(verdicts) == 3 and {v.category for v in verdicts} == {JudgeCategory.COMPLETELY_CORRECT}
    assert {v.judge.model for v in verdicts} == {judge}

    assert {r.path for r in server.requests} == {path}  # every request spoke the provider's protocol
    assert {r.body["model"] for r in server.requests} == {gen.split("/", 1)[1], judge.split("/", 1)[1]}
    assert all("sekret" in r.headers[key_header] for r in server.requests)
    dice = server.matching(DICE_GEN)
    assert len(dice) == 2 and dice[1].time - dice[0].time >= 0.2  # Retry-After waited for
    assert len(server.requests) - asked == 2 + 3  # two 503s (rules are per match, not per candidate), then three


def test_a_provider_without_litellm_is_one_line_naming_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    from lmrbench.benchmark.pipeline import providers
    from lmrbench.errors import LmrError

    monkeypatch.setattr(providers, "available", lambda: False)
    with pytest.raises(LmrError) as err:
        providers.base_url_for("anthropic/claude-x", None)
    assert "lmrbench[agents]" in str(err.value) and "\n" not in str(err.value)
    assert providers.base_url_for("anthropic/claude-x", "http://127.0.0.1:1/v1") == "http://127.0.0.1:1/v1"
    assert providers.provider_of("anthropic/claude-x") == "openai"  # sent as it is to the OpenAI-compatible URL


def test_only_a_providers_spelling_pays_for_litellm() -> None:
    """The provider list is read from litellm's source, not its 8-second import, and equals what it exports."""
    import subprocess
    import sys

    from lmrbench.benchmark.pipeline import providers

    probe = ("import sys; from lmrbench.benchmark.pipeline import providers as p; "
             "print([p.through_litellm(m) for m in ('m', 'Qwen/Qwen2.5-7B', 'openai/gpt-4o', 'anthropic/c')], "
             "'litellm' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[False, False, True, True] False"
    litellm = providers._litellm()
    assert providers.known_providers() == {str(getattr(p, "value", p)) for p in litellm.provider_list}
