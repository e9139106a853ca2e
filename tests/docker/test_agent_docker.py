"""``lmrbench agent`` end to end: mini-swe-agent driven by a scripted OpenAI-compatible server on 127.0.0.1, its
commands run in containers of the tasks' own images with no network, its goal files graded by ``evaluate``.

Few containers: the user's journey on the three examples (three agent containers, three test runs), a hostile
model on one task (one container), an endpoint failure then a step limit (two), and Ctrl-C in the middle of a task,
through the cancel event (one) and through SIGINT to the command (one)."""

from __future__ import annotations

import contextlib
import json
import re
import shutil
import socket
import threading
from pathlib import Path

import pytest
from typer.testing import CliRunner

from helpers.docker_engine import owned_containers
from helpers.llm_server import LLMServer
from lmrbench.benchmark.agents.protocol import AgentLimits, AgentResult, AgentSession
from lmrbench.benchmark.agents.runner import AgentOptions, outcome, run_agent
from lmrbench.benchmark.pipeline.llm import LLMClient, LLMConfig
from lmrbench.benchmark.pipeline.rundir import RunDir
from lmrbench.benchmark.sandbox.running.docker import DockerRunner
from lmrbench.cli.main import app
from lmrbench.core.taskset import load_taskset
from lmrbench.core.trust import trusted_paths
from lmrbench.fsutil import tree_digest
from lmrbench.progress import Cancelled
from lmrbench.schemas.agent_run import AgentStatus
from lmrbench.schemas.run import CandidateStatus, LLMParams, ResultStatus

pytest.importorskip("minisweagent")

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "tasks"
SUBMIT = "```mswea_bash_command\necho COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT\n```"
ENV_CHECK = "python3 -c 'import numpy; print(\"numpy ok\")' && python3 -m pytest --version"


def act(command: str, thought: str = "THOUGHT: next.") -> str:
    return f"{thought}\n\n```mswea_bash_command\n{command}\n```"


def examples(tmp_path: Path, only: str | None = None) -> Path:
    bench = tmp_path / "tasks"
    shutil.copytree(EXAMPLES, bench, ignore=shutil.ignore_patterns(".lmrbench"))
    for task in [p for p in bench.iterdir() if only and p.is_dir() and p.name != only]:
        shutil.rmtree(task)
    return bench


def cli(*args: object) -> str:
    result = CliRunner().invoke(app, [str(a) for a in args])
    assert result.exit_code == 0, f"{result.output}\n{result.exception!r}"
    return result.output


def test_the_agent_s_goal_files_pass_evaluate_and_a_rerun_skips_finished_tasks(
    tmp_path: Path, docker_engine: object
) -> None:
    bench, run = examples(tmp_path), tmp_path / "run"
    tasks, _ = load_taskset(bench)
    srv = LLMServer()
    try:
        for task in tasks:
            impl = task.info.implementations[0]
            golden = task.golden_path(impl).read_text()
            goal = f"{task.info.repo_folder_name}/{impl.goal_file}"
            module = impl.goal_file.removesuffix(".py").replace("/", ".")
            srv.on(impl.goal_functions[0],
                   act(f"{ENV_CHECK} && cd {task.info.repo_folder_name} && python3 -c 'import {module}; "
                       f"print(\"imported\", {module}.__name__)'", "THOUGHT: can I run its code?"),
                   act("ls", "THOUGHT: what is here?"),
                   act(f"cat <<'LMRBENCH_EOF' > {goal}\n{golden}\nLMRBENCH_EOF", "THOUGHT: implement it."),
                   SUBMIT)
        out = cli("agent", bench, "--agent", "mini-swe-agent", "--model", "scripted", "--base-url", srv.base_url,
                  "--out", run, "--step-limit", "10")
        assert "3 submitted" in out
        assert len(srv.requests) == 13  # the pre-flight request, then four per task
        out = cli("agent", bench, "--model", "scripted", "--base-url", srv.base_url, "--out", run, "--step-limit", "10")
        assert "3 already done" in out and len(srv.requests) == 13  # nothing to do: no pre-flight either
    finally:
        srv.close()
    for task in tasks:
        done = outcome(RunDir(run), task.name)
        assert done is not None and done.status is AgentStatus.SUBMITTED and done.steps == 4
        assert done.usage.prompt_tokens > 0 and done.duration > 0
        trajectory = json.loads((run / "agent" / task.name / "trajectory.json").read_text())
        observed = [m for m in trajectory["messages"] if m["role"] == "user" and "returncode" in m.get("extra", {})]
        # the image's own environment: its venv's numpy and pytest, and the repository's code importing them
        env_check = observed[0]["extra"]
        assert env_check["returncode"] == 0, observed[0]["content"]
        assert "numpy ok" in env_check["raw_output"] and re.search(r"pytest \d", env_check["raw_output"])
        assert "imported" in env_check["raw_output"]
        assert task.info.repo_folder_name in observed[1]["content"]  # the output of `ls`, as the model saw it
        assert all("timestamp" in m["extra"] for m in trajectory["messages"] if m["role"] == "assistant")

    cli("evaluate", bench, run, "--timeout", "300")
    assert sorted((r.task, r.status) for r in RunDir(run).results()) == [
        (t.name, ResultStatus.PASSED) for t in tasks]
    report = tmp_path / "actions.json"
    out = cli("agent-report", run, "--json", report)
    counts = json.loads(report.read_text())["by_outcome"]["passed"]
    assert counts == {"trajectories": 3, "counts": {"run": 3, "search": 3, "edit": 3, "submit": 3}}
    assert owned_containers(docker_engine) == []


def test_a_hostile_model_reads_no_test_golden_file_or_data_reaches_no_network_and_writes_nothing_here(
    tmp_path: Path, docker_engine: object
) -> None:
    bench, run = examples(tmp_path, "1-DPO"), tmp_path / "run"
    task = load_taskset(bench)[0][0]
    before = tree_digest(bench)
    hidden = [Path(p).name for p in trusted_paths(task)] + ["trainers_golden.py", "info.json"]
    listener = socket.create_server(("0.0.0.0", 0))
    port, accepted = listener.getsockname()[1], []
    threading.Thread(target=lambda: accepted.append(listener.accept()), daemon=True).start()
    host_ips = {"172.17.0.1"}  # Docker's default bridge: the host as containers with a network see it
    with contextlib.suppress(OSError):
        host_ips.add(socket.gethostbyname(socket.gethostname()))
    probe = "; ".join(
        f"python3 -c \"import socket; socket.create_connection(('{ip}', {port}), timeout=3)\" "
        f"|| echo blocked-{ip}" for ip in sorted(host_ips))
    srv = LLMServer()
    try:
        srv.on("preference_loss",
               act("find / -xdev \\( -name '*golden*' -o -name 'unit_test*' -o -name '*.npz' -o -name info.json"
                   " \\) 2>/dev/null | grep -v '^/proc' | head -50; ls -la /workspace /workspace/*"),
               act(probe),
               act(f"echo x > /workspace/../../escape; echo y > {tmp_path}/escape; "
                   "ln -sf /etc/passwd dpo-numpy/dpo/trainers.py; ls -la dpo-numpy/dpo"),
               SUBMIT)
        with LLMClient(LLMConfig(LLMParams(model="hostile", base_url=srv.base_url), cache_dir=None)) as client:
            docker = DockerRunner()
            try:
                summary = run_agent([task], run, _mini(), client, docker, options=AgentOptions())
            finally:
                docker.close()
    finally:
        srv.close()
        listener.close()
    assert dict(summary.statuses) == {"submitted": 1}
    trajectory = json.loads((run / "agent" / "1-DPO" / "trajectory.json").read_text())
    outputs = "\n".join(m.get("extra", {}).get("raw_output", "") for m in trajectory["messages"] if m["role"] == "user")
    assert "dpo-numpy" in outputs and "TASK.md" in outputs  # the commands ran and their output came back
    for name in hidden:
        assert name not in outputs
    assert accepted == [] and all(f"blocked-{ip}" in outputs for ip in host_ips)
    assert not (tmp_path / "escape").exists() and tree_digest(bench) == before
    cand = RunDir(run).candidate("1-DPO", 1)
    assert cand is not None and cand.status is CandidateStatus.NO_FUNCTION  # the link to /etc/passwd is no file
    assert "root:" not in "".join(p.read_text() for p in (run / "candidates").rglob("*") if p.is_file())
    assert owned_containers(docker_engine) == []


def _mini() -> object:
    from lmrbench.benchmark.agents.mini import MiniSweAgent

    return MiniSweAgent()


class _Interrupted:
    """An adapter that is cancelled (Ctrl-C) while its first command runs."""

    name = "interrupted"

    def run(self, session: AgentSession) -> AgentResult:
        assert session.cancel is not None
        session.cancel.set()
        session.container.exec("sleep 60")  # ends when the container is removed
        return AgentResult(status=AgentStatus.SUBMITTED)


def test_ctrl_c_leaves_no_container_and_no_outcome(tmp_path: Path, docker_engine: object) -> None:
    bench, run = examples(tmp_path, "1-DPO"), tmp_path / "run"
    task = load_taskset(bench)[0][0]
    cancel = threading.Event()
    srv = LLMServer()  # answers the pre-flight request (a 404 is an answer); the adapter asks nothing
    try:
        with LLMClient(LLMConfig(LLMParams(model="m", base_url=srv.base_url), cache_dir=None)) as client:
            docker = DockerRunner()
            try:
                with pytest.raises(Cancelled):
                    run_agent([task], run, _Interrupted(), client, docker, cancel=cancel)
            finally:
                docker.close()
    finally:
        srv.close()
    assert owned_containers(docker_engine) == []
    assert outcome(RunDir(run), "1-DPO") is None


def test_agent_samples_are_runs_of_their_own_that_evaluate_and_report_read_as_one(
    tmp_path: Path, docker_engine: object
) -> None:
    bench, run = examples(tmp_path, "1-DPO"), tmp_path / "run"
    task = load_taskset(bench)[0][0]
    impl = task.info.implementations[0]
    golden = task.golden_path(impl).read_text()
    goal = f"{task.info.repo_folder_name}/{impl.goal_file}"
    srv = LLMServer()
    try:  # sample 1 leaves the masked file as it is; sample 2 writes the golden code
        srv.on("preference_loss", act("ls"), SUBMIT,
               act(f"cat <<'LMRBENCH_EOF' > {goal}\n{golden}\nLMRBENCH_EOF"), SUBMIT)  # fmt: skip
        out = cli("agent", bench, "--model", "scripted", "--base-url", srv.base_url, "--out", run, "--samples", "2")
    finally:
        srv.close()
    assert "agent (sample 1 of 2): 1 submitted" in out and "agent (sample 2 of 2): 1 submitted" in out
    assert not (run / "run.json").exists()
    for sample in (1, 2):
        done = outcome(RunDir(run / "samples" / str(sample)), "1-DPO")
        assert done is not None and done.status is AgentStatus.SUBMITTED and done.steps == 2
    cli("evaluate", bench, run, "--timeout", "300")
    assert [r.status for s in (1, 2) for r in RunDir(run / "samples" / str(s)).results()] == [
        ResultStatus.FAILED, ResultStatus.PASSED]
    cli("report", run, "--no-figures")
    board = (run / "report.md").read_text().split("## Leaderboard")[1].split("##")[0]
    assert "| 50.0 | 50.0-50.0 | 1/2 | 100.0 (k=2) |" in board  # pass@1: one of two samples passed; pass@2
    assert owned_containers(docker_engine) == []


def test_an_endpoint_failure_is_kept_apart_and_tried_again_and_a_step_limit_ends_the_task(
    tmp_path: Path, docker_engine: object
) -> None:
    from helpers.llm_server import status

    bench, run = examples(tmp_path, "1-DPO"), tmp_path / "run"
    task = load_taskset(bench)[0][0]
    srv = LLMServer()
    try:
        srv.on("preference_loss", status(503))
        params = LLMParams(model="scripted", base_url=srv.base_url)
        with LLMClient(LLMConfig(params, cache_dir=None, max_retries=0)) as client:
            docker = DockerRunner()
            try:
                limits = AgentLimits(step_limit=3)  # one run, one set of limits (run.json refuses another)
                first = run_agent([task], run, _mini(), client, docker,
                                  options=AgentOptions(retries=1, limits=limits))
                kept_apart = (outcome(RunDir(run), "1-DPO"), RunDir(run).candidate("1-DPO", 1))
                srv.on("preference_loss", act("ls"), act("cat TASK.md"), "no action in this reply")
                second = run_agent([task], run, _mini(), client, docker, options=AgentOptions(limits=limits))
            finally:
                docker.close()
    finally:
        srv.close()
    assert dict(first.statuses) == {"infra_error": 1} and "503" in first.problems[0]
    assert kept_apart[0] is not None and kept_apart[0].attempts == 2  # tried again at once
    assert kept_apart[1] is None  # an infrastructure error is no wrong answer
    done = outcome(RunDir(run), "1-DPO")
    assert done is not None and done.status is AgentStatus.STEP_LIMIT and done.steps == 3
    assert dict(second.statuses) == {"step_limit": 1} and second.skipped == 0
    cand = RunDir(run).candidate("1-DPO", 1)
    assert cand is not None and cand.status is CandidateStatus.OK  # the masked file as the agent left it
    trajectory = json.loads((run / "agent" / "1-DPO" / "trajectory.json").read_text())
    assert trajectory["info"]["exit_status"] == "LimitsExceeded"
    assert owned_containers(docker_engine) == []


def test_ctrl_c_on_the_command_removes_its_container_at_once(tmp_path: Path, docker_engine: object) -> None:
    """The whole command under SIGINT while the agent waits on the model: exit 130, its container gone."""
    import os
    import signal
    import subprocess
    import sys
    import time

    from helpers.llm_server import reply

    bench = examples(tmp_path, "1-DPO")
    srv = LLMServer()
    srv.on("preference_loss", reply(act("ls"), delay=120))
    script = Path(sys.executable).with_name("lmrbench")
    proc = subprocess.Popen([str(script), "agent", str(bench), "--model", "m", "--base-url", srv.base_url,
                             "--out", str(tmp_path / "run")], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env={**os.environ, "COLUMNS": "200"})
    try:
        deadline = time.monotonic() + 120
        while not srv.matching("preference_loss"):  # the agent asked the model: its container runs
            assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
            time.sleep(0.2)
        assert len(owned_containers(docker_engine, pid=proc.pid)) == 1
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
        srv.close()
    assert proc.returncode == 130, err
    assert owned_containers(docker_engine, pid=proc.pid) == []
    assert not (tmp_path / "run" / "agent" / "1-DPO" / "outcome.json").exists()
