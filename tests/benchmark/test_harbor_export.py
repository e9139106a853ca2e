"""``task export --harbor`` writes one Harbor task per implementation whose agent-facing folders hold nothing the
grade is decided from (Harbor runs them in tests/docker/test_harbor_docker.py)."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).parents[2] / "examples" / "tasks"


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    from lmrbench.benchmark.pipeline.harbor_export import export_harbor
    from lmrbench.core.taskset import load_taskset

    tasks, problems = load_taskset(EXAMPLES)
    assert not problems
    out = tmp_path_factory.mktemp("harbor") / "dataset"
    return tasks, export_harbor(tasks, out, wheels=False, base_image="lmrbench-base:bookworm")


def _secret_files(task) -> dict[bytes, str]:
    """Every file the agent must never see, by content: golden files, tests, recorded data, info.json."""
    from lmrbench.core.trust import trusted_paths

    out = {p.read_bytes(): str(p) for p in (task.path / "golden_files").rglob("*") if p.is_file()}
    out[(task.path / "info.json").read_bytes()] = "info.json"
    for rel in trusted_paths(task):
        root = task.repo_dir / rel
        for p in [root] if root.is_file() else root.rglob("*"):
            if p.is_file() and p.stat().st_size > 0:
                out[p.read_bytes()] = str(p)
    return out


def test_each_implementation_is_a_harbor_task_whose_environment_leaks_nothing(exported):
    from lmrbench import __version__
    from lmrbench.core.taskset import task_digest

    tasks, res = exported
    assert res.tasks == ["1-dpo-1", "2-bertscore-1", "3-contrastivedecoding-1"]
    assert sorted(p.name for p in res.path.iterdir()) == [*res.tasks, "lmrbench_harbor_docker.py"]
    for task, name in zip(tasks, res.tasks, strict=True):
        impl = task.info.implementations[0]
        folder = res.path / name
        goal = f"/workspace/{task.info.repo_folder_name}/{impl.goal_files[0]}"
        text = (folder / "instruction.md").read_text()
        assert f"`{goal}`" in text and "paper.pdf" in text and impl.instruction.strip() in text

        config = tomllib.loads((folder / "task.toml").read_text())
        assert config["artifacts"] == [goal]
        assert config["environment"]["allow_internet"] is False
        assert config["verifier"] == {"timeout_sec": 720.0, "user": "root", "environment_mode": "separate"}
        assert config["metadata"]["task_digest"] == task_digest(task)
        assert config["metadata"]["lmrbench_version"] == __version__
        assert config["metadata"]["paper"] == task.info.paper_name
        assert config["metadata"]["isolation"] == "split"
        assert (config["environment"]["cpus"], config["environment"]["memory_mb"]) == (1, 2048)

        workspace = folder / "environment" / "workspace" / task.info.repo_folder_name
        assert (workspace / impl.goal_files[0]).read_bytes() == task.goal_path(impl).read_bytes()  # masked
        assert (workspace / "paper.pdf").is_file() and not (workspace / "unit_test").exists()
        secrets = _secret_files(task)
        leaked = [str(p) for p in (folder / "environment").rglob("*") if p.is_file() and p.read_bytes() in secrets]
        assert leaked == []
        assert "FROM ${BASE_IMAGE}" in (folder / "environment" / "Dockerfile").read_text()

        golden = task.golden_path(impl).read_bytes()
        assert (folder / "solution" / "golden_0.py").read_bytes() == golden
        assert goal in (folder / "solution" / "solve.sh").read_text()
        plan = json.loads((folder / "tests" / "run.json").read_text())
        assert plan["goals"] == {f"cand/repo/{impl.goal_files[0]}": goal}
        assert plan["expected_ids"] and all(i.startswith("unit_test.unit_test_1::") for i in plan["expected_ids"])
        payload = (folder / "tests" / "payload.bin").read_bytes()
        assert b"cand/repo/" + impl.goal_files[0].encode() + b"\n" not in payload  # the agent's file goes there


def test_the_export_refuses_to_replace_or_to_write_inside_a_task(exported, tmp_path):
    from lmrbench.benchmark.pipeline.harbor_export import export_harbor
    from lmrbench.errors import LmrError

    tasks, res = exported
    with pytest.raises(LmrError, match="use --force"):
        export_harbor(tasks[:1], res.path, wheels=False)
    with pytest.raises(LmrError, match="outside the task folder"):
        export_harbor(tasks[:1], tasks[0].path / "harbor", wheels=False)


def test_the_cli_writes_one_format(tmp_path):
    from typer.testing import CliRunner

    from lmrbench.cli.main import app
    from lmrbench.errors import LmrError

    out = CliRunner().invoke(app, ["task", "export", str(EXAMPLES / "1-DPO"), "--out", str(tmp_path / "x"),
                                   "--official", "--harbor"])
    assert isinstance(out.exception, LmrError) and "one format" in str(out.exception)
    assert not (tmp_path / "x").exists()


def _junit(outcomes: dict[str, str]) -> bytes:
    cases = "".join(
        f'<testcase classname="unit_test.unit_test_1" name="{name}">'
        + {"passed": "", "failed": "<failure message='x'/>", "error": "<error message='x'/>",
           "skipped": "<skipped message='x'/>"}[outcome] + "</testcase>"
        for name, outcome in outcomes.items())
    return f'<testsuites><testsuite name="pytest">{cases}</testsuite></testsuites>'.encode()


@pytest.mark.parametrize(("outcomes", "exitstatus", "key", "conftests", "want"), [
    ({"test_a": "passed", "test_b": "passed"}, 0, "run", {}, "passed"),
    ({"test_a": "passed", "test_b": "failed"}, 1, "run", {}, "failed"),
    ({"test_a": "passed"}, 0, "run", {}, "error"),  # test_b missing
    ({"test_a": "passed", "test_b": "skipped"}, 0, "run", {}, "failed"),
    ({"test_a": "passed", "test_b": "error"}, 1, "run", {}, "error"),
    ({"test_a": "passed", "test_b": "passed"}, 0, "forged", {}, "error"),  # sealed with another key
    ({"test_a": "passed", "test_b": "passed"}, 0, "run", {"conftest.py": "0" * 64}, "error"),  # not the task's
])
def test_the_verifier_decides_as_lmrbench_evaluate_does(outcomes, exitstatus, key, conftests, want):
    """The grader shipped into tests/ and ``harness.pytest_run.decide`` give the same status on the same run."""
    import sys

    from lmrbench.core.sandbox import RunResult
    from lmrbench.harness.pytest_run import decide
    from lmrbench.runtime import RUNTIME_DIR
    from lmrbench.runtime.lmrbench_protocol import seal_digest

    sys.path.insert(0, str(RUNTIME_DIR))  # as in the verifier: the grader beside the protocol
    import lmrbench_harbor

    run_key, junit = b"k" * 32, _junit(outcomes)
    sealing = run_key if key == "run" else b"f" * 32
    seal = json.dumps({"exitstatus": exitstatus, "conftests": conftests,
                       "hmac": seal_digest(sealing, junit, exitstatus, conftests)}).encode()
    expected = ["unit_test.unit_test_1::test_a", "unit_test.unit_test_1::test_b"]
    ours = decide(RunResult(exitstatus, False, "", 1.0), junit, seal, run_key, expected, sandbox="docker", held={})
    plan = {"key": run_key.hex(), "conftests": {}, "expected_ids": expected}
    status, _, _ = lmrbench_harbor.decide(exitstatus, {"out/junit.xml": junit, "out/seal.json": seal}, plan)
    assert (status, ours.status.value) == (want, want)
