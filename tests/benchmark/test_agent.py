"""Agent hand-off: the export hides tests, golden code and history; the import takes only goal functions."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from helpers.progress_lines import Lines
from helpers.run_task import GOAL, METRICS_PY, REPO, write_taskset
from lmrbench.benchmark.execution.sandboxes import get_sandbox
from lmrbench.benchmark.pipeline.agent import PROMPT_FILE, export_agent, import_agent
from lmrbench.benchmark.pipeline.evaluate import evaluate
from lmrbench.benchmark.pipeline.rundir import RunDir
from lmrbench.core.source.splice import extract_function, replace_functions
from lmrbench.core.taskset import load_taskset
from lmrbench.errors import LmrError


@pytest.fixture
def bench(tmp_path: Path) -> Path:
    bench = write_taskset(tmp_path / "bench")
    repo = bench / "1-Toy" / REPO
    (repo / "unit_test" / "data").mkdir()
    (repo / "unit_test" / "data" / "case_1.json").write_text('{"expected": 0.666}')
    (repo / "recorded").mkdir()
    (repo / "recorded" / "outputs.json").write_text("{}")
    (repo / "toy" / "metrics.pyc").write_bytes(b"compiled golden code")  # stray bytecode beside its source
    (repo / "toy" / "__pycache__").mkdir()
    (repo / "toy" / "__pycache__" / "metrics.cpython-311.pyc").write_bytes(b"compiled golden code")
    info = (bench / "1-Toy" / "info.json").read_text()
    (bench / "1-Toy" / "info.json").write_text(
        info.replace('"index": 1,', '"index": 1, "trusted_files": ["recorded"],')
    )
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    return bench


def test_export_holds_masked_repo_paper_and_prompt_only(bench, tmp_path) -> None:
    tasks, problems = load_taskset(bench)
    assert not problems
    out = export_agent(tasks, tmp_path / "agent")
    files = sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file())
    assert files == [
        f"{t}/{rel}"
        for t in ("1-Toy", "2-Async")
        for rel in (
            "TASK.md", f"{REPO}/paper.json", f"{REPO}/paper.pdf", f"{REPO}/toy/__init__.py",
            f"{REPO}/toy/metrics.py", f"{REPO}/toy/utils.py",
        )
    ] + ["export.json"]  # fmt: skip
    assert (out / "1-Toy" / REPO / GOAL).read_bytes() == (bench / "1-Toy" / REPO / GOAL).read_bytes()

    def text_of(task: str) -> str:
        return "\n".join((out / f).read_text(errors="replace") for f in files if f.startswith(task))

    assert "2 * len(a & b)" not in text_of("1-Toy") and "x * self.target / n" not in text_of("1-Toy")
    assert "return sum(xs)" not in text_of("2-Async")
    assert str(bench) not in text_of("1-Toy") + text_of("2-Async")
    prompt = (out / "1-Toy" / PROMPT_FILE).read_text()
    assert (
        "Implement dice as in the paper." in prompt
        and "`Scaler.apply`" in prompt
        and "toy/metrics.py" in prompt
    )
    with pytest.raises(LmrError, match="already exists"):
        export_agent(tasks, out)
    export_agent(tasks[:1], out, replace=True)
    assert not (out / "2-Async").exists()


def test_the_export_ships_the_requirements_the_image_uses_not_the_repositorys_original(bench, tmp_path) -> None:
    (bench / "1-Toy" / REPO / "requirements.txt").write_text("torch\ndeepspeed==0.9.0\n")  # unbuildable here
    (bench / "1-Toy" / "requirements.txt").write_text("torch==2.4.1\nnumpy<2\n")  # what the image is built from
    tasks, _ = load_taskset(bench)
    out = export_agent(tasks, tmp_path / "agent")
    shipped = (out / "1-Toy" / REPO / "requirements.txt").read_text()
    assert shipped.splitlines()[1:] == ["torch==2.4.1", "numpy<2"] and "deepspeed" not in shipped
    assert "the task's requirements.txt" in shipped.splitlines()[0]
    assert not (out / "2-Async" / REPO / "requirements.txt").exists()


def _agent_writes(path: Path, qualnames: list[str], extra: str = "") -> None:
    """What an agent does: fill in functions (from the golden text here) and touch other things."""
    text = path.read_text()
    path.write_text(replace_functions(text, METRICS_PY, qualnames, file=GOAL) + extra)


def test_import_takes_only_goal_functions_and_evaluates(bench, tmp_path) -> None:
    tasks, _ = load_taskset(bench)
    out = export_agent(tasks, tmp_path / "agent")
    goal = out / "1-Toy" / REPO / GOAL
    _agent_writes(goal, ["dice", "Scaler.apply"], extra="\nTOLD = 'module-level change'\n")
    goal.write_text(goal.read_text().replace("return math.sqrt(", "return 0 * math.sqrt("))  # an existing helper
    (out / "1-Toy" / REPO / "conftest.py").write_text("raise SystemExit(0)\n")
    (out / "2-Async" / REPO / GOAL).write_text("async def total(xs:\n")  # the agent broke the file
    summary = import_agent(tasks, out, tmp_path / "run", label="my-agent")
    assert summary.statuses == {"ok": 2, "parse_error": 1}
    run = RunDir(tmp_path / "run")
    cand = run.candidate_dir("1-Toy", 1) / REPO / GOAL
    text = cand.read_text()
    assert extract_function(text, "dice") == extract_function(METRICS_PY, "dice")
    assert "x * self.target / n" not in text  # impl 1 takes dice only
    assert "TOLD = 'module-level change'" in text and "0 * math.sqrt" not in text  # dice does not use _norm
    assert run.candidate("1-Toy", 1).helpers == ["TOLD = 'module-level change'"]  # type: ignore[union-attr]
    apply = run.candidate("1-Toy", 2)  # Scaler.apply uses the agent's own (broken) _norm: that is what is graded
    assert apply is not None and apply.renamed == ["_norm -> _norm_candidate"]
    assert "0 * math.sqrt" in (run.candidate_dir("1-Toy", 2) / REPO / GOAL).read_text()
    assert run.candidate("2-Async", 1).status.value == "parse_error"  # type: ignore[union-attr]
    manifest = run.require_manifest()
    assert manifest.source == "agent" and manifest.label == "my-agent"

    evaluate(tasks, tmp_path / "run", get_sandbox("local"), timeout=120)
    results = {(r.task, r.impl): r.status.value for r in run.results()}
    assert results == {("1-Toy", 1): "passed", ("1-Toy", 2): "failed", ("2-Async", 1): "failed"}


def test_import_of_a_missing_task_folder_or_function(bench, tmp_path) -> None:
    tasks, _ = load_taskset(bench)
    out = export_agent(tasks, tmp_path / "agent")
    goal = out / "1-Toy" / REPO / GOAL
    goal.write_text(goal.read_text().replace("def dice(a, b):", "def dice_renamed(a, b):"))
    shutil.rmtree(out / "2-Async")
    summary = import_agent(tasks, out, tmp_path / "run")
    assert summary.statuses == {"ok": 1, "no_function": 2}
    run = RunDir(tmp_path / "run")
    assert "does not define dice" in run.candidate("1-Toy", 1).reason  # type: ignore[union-attr]
    assert "no such goal file" in run.candidate("2-Async", 1).reason  # type: ignore[union-attr]
    (tmp_path / "empty").mkdir()
    with pytest.raises(LmrError, match="none of the task set"):
        import_agent(tasks, tmp_path / "empty", tmp_path / "run2")



def test_a_task_without_goal_function_is_skipped_with_one_line(bench, tmp_path) -> None:
    info = (bench / "2-Async" / "info.json").read_text()
    (bench / "2-Async" / "info.json").write_text(info.replace('"goal_function": "total"', '"goal_function": ""'))
    tasks, problems = load_taskset(bench)
    assert not problems
    said = Lines()
    out = export_agent(tasks, tmp_path / "agent", progress=said)
    assert sorted(p.name for p in out.iterdir()) == ["1-Toy", "export.json"]
    assert json.loads((out / "export.json").read_text())["tasks"] == ["1-Toy"]
    assert said.lines == [f"warning: 2-Async: not exported: {bench / '2-Async' / 'info.json'}: "
                          "implementation 1 names no goal function"]


def test_a_goal_function_kept_in_a_test_file_is_exported_alone(tmp_path) -> None:
    import json

    task = tmp_path / "bench" / "3-InTest"
    tests = task / "repo" / "unit_test"
    (tests / "data").mkdir(parents=True)
    (tests / "unit_test_1.py").write_text(
        "def goal(x):\n    raise NotImplementedError\n\n\nif __name__ == '__main__':\n    print(goal(2))\n")
    (tests / "unit_test_2.py").write_text("SECRET = 41\n")
    (tests / "data" / "expected.json").write_text("[4]")
    info = {"instance_id": 3, "repo_folder_name": "repo", "implementations": [
        {"index": 1, "instruction": "Square.", "goal_file": "unit_test/unit_test_1.py", "goal_function": "goal",
         "unit_test_file": "unit_test/unit_test_1.py"}]}
    (task / "info.json").write_text(json.dumps(info))
    tasks, problems = load_taskset(tmp_path / "bench")
    assert not problems
    out = export_agent(tasks, tmp_path / "agent")
    files = sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file())
    assert files == ["3-InTest/TASK.md", "3-InTest/repo/unit_test/unit_test_1.py", "export.json"]


def test_data_the_tests_read_that_validate_never_marked_is_withheld_with_a_warning(bench, tmp_path) -> None:
    repo = bench / "1-Toy" / REPO
    (repo / "tensors" / "impl_1").mkdir(parents=True)
    (repo / "tensors" / "impl_1" / "expected.json").write_text("[0.666]")
    (repo / "vocab.txt").write_text("a\nb\n")  # handed to the repository's own code: its input, kept
    (repo / "toy" / "vocab.py").write_text("def read_vocab(path):\n    return open(path).read().split()\n")
    (repo / "unit_test" / "unit_test_1.py").write_text(
        "import json\nfrom pathlib import Path\n\nfrom toy.metrics import dice\nfrom toy.vocab import read_vocab\n\n"
        "HERE = Path(__file__).resolve().parent\n\n\ndef test_recorded():\n"
        "    want = json.loads((HERE.parent / 'tensors' / 'impl_1' / 'expected.json').read_text())\n"
        "    assert dice(read_vocab('vocab.txt'), ['a']) == want[0]\n")
    said = Lines()
    out = export_agent(load_taskset(bench)[0], tmp_path / "agent", progress=said)
    shipped = out / "1-Toy" / REPO
    assert not (shipped / "tensors" / "impl_1" / "expected.json").exists() and (shipped / "vocab.txt").is_file()
    assert said.lines == ["warning: 1-Toy: withheld tensors/impl_1/expected.json: its tests read them outside "
                          "unit_test/ and no trusted path covers them (the task was not validated since its tests "
                          "changed); run `lmrbench validate`"]
    info = json.loads((bench / "1-Toy" / "info.json").read_text())
    info["implementations"][0]["trusted_files"] = ["recorded", "tensors/impl_1"]  # as validate marks it
    (bench / "1-Toy" / "info.json").write_text(json.dumps(info))
    quiet = Lines()
    again = export_agent(load_taskset(bench)[0], tmp_path / "agent2", progress=quiet)
    assert not (again / "1-Toy" / REPO / "tensors" / "impl_1").exists() and quiet.lines == []
    assert (again / "1-Toy" / REPO / "vocab.txt").is_file()
