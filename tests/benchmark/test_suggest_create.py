"""``--create``: the best candidate becomes a task (new, record, validate) with a draft instruction from its
passage, rewritten by a model over real HTTP when an endpoint is given, and marked for a person to check."""

from __future__ import annotations

from pathlib import Path

from helpers.llm_server import LLMServer
from helpers.suggest_fixture import METHODS, make_pair, target_ref
from lmrbench.authoring.suggest.suggest import suggest
from lmrbench.benchmark.pipeline.llm import LLMConfig
from lmrbench.benchmark.sandbox.running.local import LocalRunner
from lmrbench.benchmark.suggest_create import create_tasks, eligible
from lmrbench.core.taskset import load_task
from lmrbench.harness.sandbox import Sandbox
from lmrbench.schemas.run import LLMParams

GAE = METHODS[5]
REWRITTEN = "Implement generalized advantage estimation: return A_t for every step of the episode."


def test_the_best_candidate_becomes_a_valid_task_with_a_marked_instruction(tmp_path: Path, server: LLMServer):
    repo, pdf = make_pair(tmp_path, GAE)
    server.on("Draft instruction", REWRITTEN)
    box = Sandbox(LocalRunner())
    found = suggest(repo, pdf, sandbox=box, top=5, commands=["python examples/train.py"])
    assert found.candidates[0].function.ref == target_ref(GAE)
    assert [eligible(c) for c in found.candidates[1:]] == ["no command calls it"] * 4
    llm = LLMConfig(LLMParams(model="drafter", base_url=server.base_url), cache_dir=None)
    made = create_tasks(found, repo, pdf, tmp_path / "bench", 2, sandbox=box, llm=llm)
    assert len(made) == 1  # the others have no caller
    m = made[0]
    assert m.error is None and m.valid, m.error
    task = load_task(m.task.path)
    impl = task.info.implementation(1)
    assert impl.instruction == REWRITTEN and impl.goal_function == "gae_advantages"
    assert task.info.paper_name == GAE.title
    note = (task.info.provenance or {})["instruction"]
    assert note.startswith("draft written from the paper's passage p. ") and "drafter" in note
    assert "a person must check it" in note
    # the driver's 3 calls, plus the cases the recording adds where it never varied a parameter (lam, gamma)
    assert m.record is not None and len([c for c in m.record.cases if not c.amplified]) == 3
    prompt = server.requests[0].text
    assert "generalized advantage estimator" in prompt and "Implement the function `gae_advantages`" in prompt
