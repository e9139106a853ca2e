"""lmrbench under Inspect AI, end to end with a real Docker engine and Inspect itself (no mock of either).

Inspect's own conformance suite for sandbox providers (``inspect_ai.util._sandbox.self_check``, 44 checks) runs on
an ``lmrbench`` sandbox of an example task; then ``lmr_bench`` is evaluated on the three examples with two
offline mock models at once: one writes each golden file over the masked goal file with the bash tool (every
sample scores 1), the other submits the masked stub untouched (every sample scores 0). The log is read back, and
served by ``inspect view`` on 127.0.0.1.
"""

from __future__ import annotations

import base64
import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING

import httpx
import pytest

from helpers.docker_engine import owned_containers
from lmrbench.core.taskset import load_taskset

if TYPE_CHECKING:
    from inspect_ai.model import ChatMessage, GenerateConfig, ModelOutput
    from inspect_ai.tool import ToolChoice, ToolInfo
    from inspect_ai.util import SandboxEnvironment

    Outputs = Callable[[list[ChatMessage], list[ToolInfo], ToolChoice, GenerateConfig], ModelOutput]

# Inspect AI takes seconds to import: the tests import it, not the module, so collecting it (in every worker, in
# the quick tier too) costs nothing.

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "tasks"
KNOWN_FAILURES = {
    # The container drops every capability, root's too, as ``lmrbench agent``'s does: root cannot add a user
    # (adduser's groupadd fails writing /etc/gshadow), so the check never gets the user it switches to.
    "test_exec_as_user",
}
"""Checks of Inspect's suite the lmrbench sandbox fails on purpose, each with its reason."""
CHAINS = [
    ["test_read_file_zero_length", "test_write_text_file_zero_length", "test_write_binary_file_zero_length"],
    ["test_write_text_file_space", "test_write_binary_file_space"],
    ["test_write_text_file_exists", "test_write_binary_file_exists"],
]
"""Checks that use the same file name, run one after the other; every other check runs beside the rest (as an
agent's parallel tool calls do), which keeps the suite's two 5-second waits after a timeout off the total."""


@pytest.fixture(scope="module")
def bench(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the three examples (grading writes nothing into a task folder; the copy keeps it so)."""
    out = tmp_path_factory.mktemp("inspect") / "tasks"
    shutil.copytree(EXAMPLES, out, ignore=shutil.ignore_patterns(".lmrbench"))
    return out


def test_the_lmrbench_sandbox_passes_inspect_s_conformance_suite(bench: Path, base_image: str) -> None:
    import anyio
    from inspect_ai.util._sandbox import self_check

    from lmrbench.integrations.inspect.engine import engine
    from lmrbench.integrations.inspect.sandbox import LmrbenchConfig, LmrbenchSandbox

    checks: dict[str, Callable[[SandboxEnvironment], Awaitable[None]]] = {
        name: getattr(self_check, name) for name in self_check.__all__}  # fmt: skip
    assert len(checks) == 44, sorted(checks)
    failures: dict[str, str] = {}

    async def check(name: str, env: SandboxEnvironment) -> None:
        try:
            await checks[name](env)
        except Exception as exc:  # noqa: BLE001 - each check's failure is recorded, then compared
            failures[name] = f"{type(exc).__name__}: {exc}"[:300]

    async def run_all() -> None:
        config = LmrbenchConfig(task=str(bench / "1-DPO"), lifetime=600)
        await LmrbenchSandbox.task_init("self_check", config)
        envs = await LmrbenchSandbox.sample_init("self_check", config, {})
        try:
            env = envs["default"]
            chained = {name for chain in CHAINS for name in chain}
            limit = anyio.CapacityLimiter(8)

            async def run_chain(names: list[str]) -> None:
                async with limit:
                    for name in names:
                        await check(name, env)

            async with anyio.create_task_group() as group:
                for names in [*CHAINS, *([n] for n in sorted(set(checks) - chained))]:
                    group.start_soon(run_chain, names)
        finally:
            await LmrbenchSandbox.sample_cleanup("self_check", config, envs, False)

    anyio.run(run_all)
    assert set(failures) == KNOWN_FAILURES, failures
    assert owned_containers(engine().runner.client) == []


def _said(output: ModelOutput) -> ModelOutput:
    """An output with its token usage stated (without it Inspect counts tokens with tiktoken, which downloads)."""
    from inspect_ai.model import ModelUsage

    output.usage = ModelUsage(input_tokens=10, output_tokens=10, total_tokens=20)
    return output


def golden_answers(bench: Path) -> Outputs:
    """A model that, seeing a sample's instruction, writes the golden file over the goal file with bash, then
    submits; it knows the sample from the goal file's path the instruction names."""
    from inspect_ai.model import ChatMessageTool, ModelOutput

    writes = {}
    for task in load_taskset(bench)[0]:
        impl = task.info.implementations[0]
        goal = f"{task.info.repo_folder_name}/{impl.goal_file}"
        code = base64.b64encode(task.golden_path(impl).read_bytes()).decode()
        writes[goal] = f"echo {code} | base64 -d > {goal} && python3 -c 'import numpy' && echo written"

    def answer(messages: list[ChatMessage], tools: list[ToolInfo], choice: ToolChoice,
               config: GenerateConfig) -> ModelOutput:  # fmt: skip
        if any(isinstance(m, ChatMessageTool) for m in messages):
            return _said(ModelOutput.for_tool_call("mockllm/model", "submit", {"answer": "done"}))
        prompt = "\n".join(m.text for m in messages)
        command = next(cmd for goal, cmd in writes.items() if f"`{goal}`" in prompt)
        return _said(ModelOutput.for_tool_call("mockllm/model", "bash", {"command": command}))

    return answer


def stub_answers(messages: list[ChatMessage], tools: list[ToolInfo], choice: ToolChoice,
                 config: GenerateConfig) -> ModelOutput:  # fmt: skip
    """A model that submits at once, leaving the masked stub as it is."""
    from inspect_ai.model import ModelOutput

    return _said(ModelOutput.for_tool_call("mockllm/model", "submit", {"answer": "done"}))


def test_lmr_bench_scores_the_golden_code_1_and_the_masked_stub_0_and_the_log_opens_in_inspect_view(
    bench: Path, base_image: str, tmp_path: Path
) -> None:
    from inspect_ai import eval as inspect_eval
    from inspect_ai.log import read_eval_log
    from inspect_ai.model import get_model

    from lmrbench.integrations.inspect.engine import engine
    from lmrbench.integrations.inspect.task import lmr_bench

    golden = get_model("mockllm/model", custom_outputs=golden_answers(bench), memoize=False)
    stub = get_model("mockllm/model", custom_outputs=stub_answers, memoize=False)
    logs = inspect_eval(lmr_bench(bench=str(bench), evidence=str(tmp_path / "evidence")), model=[golden, stub],
                        log_dir=str(tmp_path / "logs"), display="none", max_tasks=2)  # fmt: skip
    assert [log.status for log in logs] == ["success", "success"], [log.error for log in logs]
    scores = {}
    for which, log in zip(("golden", "stub"), logs, strict=True):
        read = read_eval_log(log.location)
        assert read.samples is not None and len(read.samples) == 3
        for sample in read.samples:
            assert sample.scores is not None
            score = sample.scores["lmr_grade"]
            scores[(which, str(sample.id))] = score.value
            verdict = sample.metadata["lmrbench"]
            assert verdict["result"]["isolation"] == "split", verdict["result"]
            assert verdict["evidence"]["record"]["report"]["expected_ids"], verdict["evidence"]["record"]
            assert verdict["evidence"]["runs"] and "junit.xml" in verdict["evidence"]["runs"][0]["reports"]
    ids = ["1-DPO#1", "2-BERTScore#1", "3-ContrastiveDecoding#1"]
    assert scores == {**{("golden", i): "C" for i in ids}, **{("stub", i): "I" for i in ids}}
    assert sorted(p.name for p in (tmp_path / "evidence").iterdir()) == [i.split("#")[0] for i in ids]
    assert owned_containers(engine().runner.client) == []
    _served_by_inspect_view(tmp_path / "logs", Path(logs[0].location).name, tmp_path)


def _served_by_inspect_view(log_dir: Path, name: str, tmp_path: Path) -> None:
    """``inspect view`` on 127.0.0.1 lists the log and serves it whole (its own data folder kept in tmp_path)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    inspect = Path(sys.executable).with_name("inspect")
    env = {**os.environ, "XDG_DATA_HOME": str(tmp_path / "data"), "XDG_STATE_HOME": str(tmp_path / "state")}
    said = tmp_path / "view.log"
    with said.open("wb") as out:
        proc = subprocess.Popen([str(inspect), "view", "start", "--log-dir", str(log_dir), "--host", "127.0.0.1",
                                 "--port", str(port)], env=env, stdout=out, stderr=subprocess.STDOUT)  # fmt: skip
    try:
        base = f"http://127.0.0.1:{port}/api"
        deadline = time.monotonic() + 120
        listing = None
        while listing is None and proc.poll() is None and time.monotonic() < deadline:
            try:
                listing = httpx.get(f"{base}/log-files", timeout=5).json()
            except httpx.HTTPError:
                time.sleep(0.5)
        assert listing is not None, said.read_text(errors="replace")[-2000:]
        found = [f["name"] for f in listing["files"] if f["name"].endswith(name)]
        assert len(found) == 1, listing
        log = httpx.get(f"{base}/logs/{found[0]}", timeout=30)
        assert log.status_code == 200, log.text[:500]
        assert log.json()["status"] == "success" and len(log.json()["samples"]) == 3
    finally:
        proc.terminate()
        proc.wait(timeout=30)
