"""Creating a task from a git repository: masked repo, golden file, info.json, paper, no history, no half-writes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from lmrbench.authoring.check import check_task
from lmrbench.authoring.splice import splice_bodies
from lmrbench.authoring.task_new import FunctionRef, TaskSpec, create_task, next_task_name
from lmrbench.errors import LmrError


def _spec(repo: Path, bench: Path, **kw) -> TaskSpec:
    base = dict(source=str(repo), functions=[FunctionRef.parse("losses.py::preference_loss")],
                instructions=["Implement the DPO loss."], bench=bench, category="loss function",
                paper_name="Toy DPO")
    base.update(kw)
    return TaskSpec(**base)


def test_task_from_git_repo_masks_function_and_golden_restores_original(fixture_repo: Path, fixture_pdf: Path,
                                                                        tmp_path: Path) -> None:
    original = (fixture_repo / "losses.py").read_bytes()
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=fixture_repo, capture_output=True, text=True).stdout
    task = create_task(_spec(fixture_repo, tmp_path / "bench", paper=fixture_pdf, paper_url="https://x/p.pdf"))

    assert task.path == tmp_path / "bench" / "1-ToyDPO"
    impl = task.info.implementations[0]
    assert (impl.goal_file, impl.goal_function, impl.golden_file) == (
        "losses.py", "preference_loss", "golden_files/losses_golden.py")
    assert task.info.upstream_commit == head.strip()
    assert impl.category == "loss function"
    masked = task.goal_path(impl).read_bytes()
    assert task.golden_path(impl).read_bytes() == original
    assert splice_bodies(masked.decode(), original.decode(), ["preference_loss"]).encode() == original
    assert not (task.repo_dir / ".git").exists()
    assert (task.repo_dir / "unit_test").is_dir()
    pages = json.loads((task.repo_dir / "paper.json").read_text())
    assert list(pages) == ["1", "2"] and "beta" in pages["1"]
    assert (task.repo_dir / "paper.pdf").read_bytes() == fixture_pdf.read_bytes()
    # The source repository is untouched.
    assert (fixture_repo / "losses.py").read_bytes() == original
    status = subprocess.run(["git", "status", "--porcelain"], cwd=fixture_repo, capture_output=True, text=True)
    assert status.stdout == ""

    # The masked function raises NotImplementedError when called; the rest of the module still works.
    code = ("import sys; sys.path.insert(0, sys.argv[1]); import losses, numpy as np\n"
            "assert losses.Scaler(2).scale(3) == 6\n"
            "try:\n    losses.preference_loss(np.zeros(1), np.zeros(1))\nexcept NotImplementedError:\n"
            "    print('masked')\n")
    out = subprocess.run([sys.executable, "-c", code, str(task.repo_dir)], capture_output=True, text=True)
    assert out.stdout.strip() == "masked", out.stderr
    # Only the missing recorded tests are reported by the static check.
    assert [p for p in check_task(task) if "unit_test_file" not in p] == []


def test_methods_and_several_functions_become_one_implementation_each(fixture_repo: Path, tmp_path: Path) -> None:
    spec = _spec(fixture_repo, tmp_path, functions=[FunctionRef.parse("losses.py::preference_loss"),
                                                    FunctionRef.parse("losses.py::Scaler.scale")],
                 instructions=["loss", "scale"], name="4-Two")
    task = create_task(spec)
    a, b = task.info.implementations
    assert (a.index, b.index, b.class_name, b.goal_function, b.instruction) == (1, 2, "Scaler", "scale", "scale")
    assert a.golden_file == b.golden_file
    text = task.goal_path(a).read_text()
    assert text.count("raise NotImplementedError") == 2 and "out = x * self.k" not in text
    assert task.info.instance_id == 4


def test_existing_task_is_refused_without_force_and_replaced_with_it(fixture_repo: Path, tmp_path: Path) -> None:
    create_task(_spec(fixture_repo, tmp_path, name="1-A"))
    marker = tmp_path / "1-A" / "keep.txt"
    marker.write_text("author notes")
    with pytest.raises(LmrError, match="exists; use --force"):
        create_task(_spec(fixture_repo, tmp_path, name="1-A"))
    assert marker.exists()
    create_task(_spec(fixture_repo, tmp_path, name="1-A"), force=True)
    assert not marker.exists()


@pytest.mark.parametrize(
    ("kw", "needle"),
    [
        ({"functions": [FunctionRef.parse("losses.py::preferance_loss")]}, "preference_loss"),
        ({"functions": [FunctionRef.parse("nope.py::f")]}, "goal file not found"),
        ({"functions": [FunctionRef.parse("../outside.py::f")]}, "leaves the repository"),
        ({"source": "/nonexistent/repo.git"}, "clone failed"),
        ({"commit": "0123456789abcdef"}, "no commit"),
        ({"category": "astrology"}, "unknown category"),
        ({"instructions": ["a", "b"]}, "one per function"),
    ],
)
def test_bad_input_is_one_line_and_leaves_nothing(fixture_repo: Path, tmp_path: Path, kw: dict,
                                                  needle: str) -> None:
    bench = tmp_path / "bench"
    bench.mkdir()
    with pytest.raises(LmrError) as err:
        create_task(_spec(fixture_repo, bench, **kw))
    assert needle in str(err.value) and "\n" not in str(err.value)
    assert list(bench.iterdir()) == []


def test_syntax_error_and_non_utf8_goal_files_are_named(make_repo, tmp_path: Path) -> None:
    repo = tmp_path / "r"
    make_repo(repo, {"bad.py": "def f(:\n    pass\n", "latin.py": "x = 'caf\xe9'\n".encode("latin-1")})
    with pytest.raises(LmrError, match=r"bad.py: syntax error"):
        create_task(_spec(repo, tmp_path / "b", functions=[FunctionRef.parse("bad.py::f")]))
    with pytest.raises(LmrError, match=r"latin.py: not UTF-8"):
        create_task(_spec(repo, tmp_path / "b", functions=[FunctionRef.parse("latin.py::f")]))


def test_crlf_goal_file_keeps_its_line_endings(make_repo, tmp_path: Path) -> None:
    repo = tmp_path / "r"
    src = "# header\r\ndef f(x):\r\n    \"\"\"Doc.\"\"\"\r\n    return x + 1\r\n\r\n\r\ndef g():\r\n    return 2\r\n"
    make_repo(repo, {"m.py": src.encode()})
    subprocess.run(["git", "config", "core.autocrlf", "false"], cwd=repo, check=True)
    task = create_task(_spec(repo, tmp_path / "b", functions=[FunctionRef.parse("m.py::f")]))
    masked = task.goal_path(task.info.implementations[0]).read_bytes()
    assert b"\r\n" in masked and b"\n" not in masked.replace(b"\r\n", b"")
    assert masked.endswith(b"def g():\r\n    return 2\r\n")


def test_next_task_name_counts_up(tmp_path: Path) -> None:
    assert next_task_name(tmp_path, "direct preference optimization") == "1-DirectPreferenceOptimization"
    (tmp_path / "7-X").mkdir()
    (tmp_path / "7-X" / "info.json").write_text("{}")
    assert next_task_name(tmp_path, "y").startswith("8-")
