"""Creating a task from a git repository: masked repo, golden file, info.json, paper, no history, no half-writes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from lmrbench.authoring.check.check import check_task
from lmrbench.authoring.task.goal_functions import add_implementation, remask
from lmrbench.authoring.task.mask import MaskStyle
from lmrbench.authoring.task.task_new import create_task
from lmrbench.authoring.task.task_spec import FunctionRef, TaskSpec, next_task_name
from lmrbench.core.source.splice import splice_bodies
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
    assert impl.category == "Training Objectives & Optimization"
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


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def _raises(repo_dir: Path, call: str) -> str:
    code = ("import sys; sys.path.insert(0, sys.argv[1]); import losses, numpy as np\n"
            f"try:\n    {call}\nexcept NotImplementedError:\n    print('masked')\n")
    out = subprocess.run([sys.executable, "-c", code, str(repo_dir)], capture_output=True, text=True)
    return out.stdout.strip() or out.stderr


def test_add_implementation_masks_a_method_and_reuses_the_golden(fixture_repo: Path, tmp_path: Path) -> None:
    original = (fixture_repo / "losses.py").read_bytes()
    task = create_task(_spec(fixture_repo, tmp_path / "bench"))
    task = add_implementation(task, FunctionRef.parse("losses.py::Scaler.scale"), "Scale by k.",
                              category="Training Objectives & Optimization")

    raw = json.loads((task.path / "info.json").read_text())
    new = raw["implementations"][1]
    assert (new["index"], new["goal_function"], new["class_name"]) == (2, "scale", "Scaler")
    assert new["golden_file"] == "golden_files/losses_golden.py"
    assert new["unit_test_file"] == "unit_test/unit_test_2.py"
    assert sorted(p.name for p in (task.path / "golden_files").iterdir()) == ["losses_golden.py"]
    assert (task.path / "golden_files" / "losses_golden.py").read_bytes() == original
    assert _raises(task.repo_dir, "losses.preference_loss(np.zeros(1), np.zeros(1))") == "masked"
    assert _raises(task.repo_dir, "losses.Scaler(2).scale(3)") == "masked"
    masked = task.goal_path(task.info.implementations[1]).read_text()
    assert splice_bodies(masked, original.decode(), ["preference_loss", "Scaler.scale"]).encode() == original
    assert [p for p in check_task(task) if "unit_test_file" not in p] == []


def test_add_implementation_in_a_new_file_writes_its_golden(make_repo, tmp_path: Path) -> None:
    repo = tmp_path / "r"
    make_repo(repo, {"a.py": "def f():\n    return 1\n", "pkg/util.py": "def g(x):\n    return x * 2\n"})
    task = create_task(_spec(repo, tmp_path / "b", functions=[FunctionRef.parse("a.py::f")]))
    task = add_implementation(task, FunctionRef.parse("pkg/util.py::g"), "Double x.")
    impl = task.info.implementation(2)
    assert impl.golden_file == "golden_files/util_golden.py"
    assert task.golden_path(impl).read_text() == "def g(x):\n    return x * 2\n"
    assert "raise NotImplementedError" in task.goal_path(impl).read_text()


@pytest.mark.parametrize(
    ("ref", "needle"),
    [
        ("losses.py::preference_loss", "already implementation 1"),
        ("losses.py::Scaler.scal", "Scaler.scale"),
        ("missing.py::f", "goal file not found"),
        ("../x.py::f", "leaves the repository"),
    ],
)
def test_add_implementation_errors_leave_the_folder_unchanged(fixture_repo: Path, tmp_path: Path, ref: str,
                                                              needle: str) -> None:
    task = create_task(_spec(fixture_repo, tmp_path / "bench"))
    before = _snapshot(task.path)
    with pytest.raises(LmrError) as err:
        add_implementation(task, FunctionRef.parse(ref), "x")
    assert needle in str(err.value) and "\n" not in str(err.value)
    assert _snapshot(task.path) == before


def test_add_implementation_refuses_a_function_masked_by_hand(fixture_repo: Path, tmp_path: Path) -> None:
    task = create_task(_spec(fixture_repo, tmp_path / "bench"))
    goal = task.repo_dir / "losses.py"
    goal.write_text(goal.read_text().replace("return -np.logaddexp(0.0, -x)", "raise NotImplementedError"))
    before = _snapshot(task.path)
    with pytest.raises(LmrError, match="log_sigmoid is already masked"):
        add_implementation(task, FunctionRef.parse("losses.py::log_sigmoid"), "x")
    with pytest.raises(LmrError, match="instruction is empty"):
        add_implementation(task, FunctionRef.parse("losses.py::Scaler.scale"), " ")
    assert _snapshot(task.path) == before


def test_remask_rebuilds_every_implementation_of_the_file_in_the_new_style(fixture_repo: Path,
                                                                            tmp_path: Path) -> None:
    original = (fixture_repo / "losses.py").read_text()
    task = create_task(_spec(fixture_repo, tmp_path / "bench"))
    task = add_implementation(task, FunctionRef.parse("losses.py::Scaler.scale"), "Scale by k.")
    task = remask(task, 1, MaskStyle.PASS)
    masked = (task.repo_dir / "losses.py").read_text()
    assert "NotImplementedError" not in masked and "TODO" not in masked
    assert masked.count("        pass\n") == 1 and masked.count("    pass\n") == 2
    assert splice_bodies(masked, original, ["preference_loss", "Scaler.scale"]) == original
    assert _raises(task.repo_dir, "losses.Scaler(2).scale(3)") == ""  # pass: returns None, no error
    before = _snapshot(task.path)
    with pytest.raises(LmrError, match="no implementation with index 5"):
        remask(task, 5, MaskStyle.RAISE)
    assert _snapshot(task.path) == before


def test_publish_moves_a_draft_task_with_its_final_metadata_and_results(fixture_repo: Path, fixture_pdf: Path,
                                                                       tmp_path: Path) -> None:
    from lmrbench.authoring.task.task_new import publish_task

    draft = tmp_path / "bench" / ".draft"
    task = create_task(_spec(fixture_repo, draft, name="1-Toy"))
    (draft / "validate" / "1-Toy").mkdir(parents=True)
    (draft / "validate" / "1-Toy" / "impl-1.json").write_text("{}")
    spec = _spec(fixture_repo, tmp_path / "bench", instructions=["Final words."], paper=fixture_pdf,
                 paper_url="https://x/p.pdf", year=2024)
    done = publish_task(task, spec, draft / "validate")
    assert done.path == tmp_path / "bench" / "1-Toy" and not task.path.exists()
    assert done.info.implementations[0].instruction == "Final words." and done.info.year == 2024
    assert (done.repo_dir / "paper.json").is_file()
    assert (tmp_path / "bench" / ".lmrbench" / "validate" / "1-Toy" / "impl-1.json").is_file()
    with pytest.raises(LmrError, match="exists"):
        publish_task(create_task(_spec(fixture_repo, draft, name="1-Toy")), spec, draft / "validate")


@pytest.mark.parametrize("text", ["../x.py::f", "/abs/x.py::f", "a/../../x.py::f"])
def test_a_function_outside_the_repository_is_one_line(text: str) -> None:
    with pytest.raises(LmrError, match="FILE leaves the repository") as err:
        FunctionRef.parse(text)
    assert "\n" not in str(err.value)


def test_category_alias_is_stored_as_the_papers_name(fixture_repo: Path, tmp_path: Path) -> None:
    task = create_task(_spec(fixture_repo, tmp_path, category="loss"))
    assert task.info.implementations[0].category == "Training Objectives & Optimization"


def test_a_file_that_is_not_a_pdf_is_refused_as_the_paper(fixture_repo: Path, tmp_path: Path) -> None:
    bench = tmp_path / "bench"
    with pytest.raises(LmrError, match="not a PDF") as err:
        create_task(_spec(fixture_repo, bench, paper=fixture_repo / "README.md"))
    assert "README.md" in str(err.value)
    assert not bench.exists() or list(bench.iterdir()) == []


def test_without_a_paper_paper_json_is_an_empty_object(fixture_repo: Path, tmp_path: Path) -> None:
    task = create_task(_spec(fixture_repo, tmp_path))
    assert json.loads((task.repo_dir / "paper.json").read_text()) == {}
    assert not (task.repo_dir / "paper.pdf").exists()


def test_nested_function_has_no_class_name_and_a_method_has_its_class(make_repo, tmp_path: Path) -> None:
    src = ("class Box:\n    def area(self):\n        return 1\n\n\n"
           "def outer(x):\n    def inner(y):\n        return y + 1\n    return inner(x)\n")
    repo = tmp_path / "nest"
    make_repo(repo, {"m.py": src})
    task = create_task(_spec(repo, tmp_path / "bench", functions=[FunctionRef.parse("m.py::outer.inner"),
                                                                  FunctionRef.parse("m.py::Box.area")]))
    nested, method = task.info.implementations
    assert (nested.goal_function, nested.class_name, nested.qualnames) == ("outer.inner", "", ["outer.inner"])
    assert (method.goal_function, method.class_name, method.qualnames) == ("area", "Box", ["Box.area"])


def test_the_same_function_twice_is_refused_unless_forced(fixture_repo: Path, tmp_path: Path) -> None:
    bench = tmp_path / "bench"
    create_task(_spec(fixture_repo, bench))
    with pytest.raises(LmrError, match="already task 1-ToyDPO") as err:
        create_task(_spec(fixture_repo, bench))
    assert "--force" in str(err.value)
    assert sorted(p.name for p in bench.iterdir()) == ["1-ToyDPO"]
    assert create_task(_spec(fixture_repo, bench), force=True).name == "2-ToyDPO"


def test_task_folders_follow_the_umask_not_0700(fixture_repo: Path, tmp_path: Path) -> None:
    import os
    import stat

    old = os.umask(0o022)
    try:
        task = create_task(_spec(fixture_repo, tmp_path))
    finally:
        os.umask(old)
    assert stat.S_IMODE(task.path.stat().st_mode) == 0o755


def test_a_bare_repository_is_cloned_at_its_head(fixture_repo: Path, tmp_path: Path) -> None:
    bare = tmp_path / "bare.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(fixture_repo), str(bare)], check=True)
    task = create_task(_spec(bare, tmp_path / "bench"))
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=fixture_repo, capture_output=True, text=True).stdout
    assert task.info.upstream_commit == head.strip()
    assert sorted(p.name for p in task.repo_dir.iterdir()) == [
        "README.md", "losses.py", "paper.json", "requirements.txt", "train.py", "unit_test"]


def test_a_failed_checkout_reports_gits_own_error(make_repo, tmp_path: Path) -> None:
    repo = tmp_path / "empty"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    with pytest.raises(LmrError) as err:
        create_task(_spec(repo, tmp_path / "bench"))
    assert "None" not in str(err.value) and "no HEAD commit" in str(err.value)


def test_repo_url_and_folder_name_can_be_set(fixture_repo: Path, tmp_path: Path) -> None:
    task = create_task(_spec(fixture_repo, tmp_path, repo_url="https://example.org/toy.git", repo_folder_name="toy"))
    assert (task.info.repo_url, task.info.repo_folder_name) == ("https://example.org/toy.git", "toy")
    assert (task.path / "toy" / "losses.py").is_file()
    with pytest.raises(LmrError, match="one plain folder name"):
        create_task(_spec(fixture_repo, tmp_path / "b2", repo_folder_name="../up"))


def test_new_tasks_write_retrieval_content_and_old_files_keep_their_spelling(fixture_repo: Path,
                                                                            tmp_path: Path) -> None:
    from lmrbench.schemas.task_info import load_task_info, save_task_info

    task = create_task(_spec(fixture_repo, tmp_path, retrieval_context=["train.py"]))
    raw = json.loads((task.path / "info.json").read_text())["implementations"][0]
    assert raw["retrieval_content"] == ["train.py"] and "retrieval_context" not in raw
    raw_old = json.loads((task.path / "info.json").read_text())
    raw_old["implementations"][0]["retrieval_context"] = raw_old["implementations"][0].pop("retrieval_content")
    (task.path / "info.json").write_text(json.dumps(raw_old))
    save_task_info(load_task_info(task.path), task.path)
    again = json.loads((task.path / "info.json").read_text())["implementations"][0]
    assert again["retrieval_context"] == ["train.py"] and "retrieval_content" not in again


def test_rename_keeps_the_tests_and_moves_the_name_into_info_json(fixture_repo: Path, tmp_path: Path) -> None:
    from lmrbench.authoring.task.task_new import rename_task
    from lmrbench.core.taskset import load_task

    bench = tmp_path / "bench"
    task = create_task(_spec(fixture_repo, bench, name="1-Source"))
    (task.repo_dir / "unit_test").mkdir(exist_ok=True)
    (task.repo_dir / "unit_test" / "unit_test_1.py").write_text("def test_x():\n    pass\n")
    info = json.loads((task.path / "info.json").read_text())
    info["custom_key"] = "kept"  # an unknown key survives
    (task.path / "info.json").write_text(json.dumps(info))
    renamed = rename_task(load_task(task.path), "2-ToyDPO")
    assert not task.path.exists() and renamed.path == bench / "2-ToyDPO"
    assert (renamed.repo_dir / "unit_test" / "unit_test_1.py").is_file()
    saved = json.loads((renamed.path / "info.json").read_text())
    assert (saved["folder_name"], saved["instance_id"], saved["custom_key"]) == ("2-ToyDPO", 2, "kept")
    (bench / "3-Other").mkdir()
    with pytest.raises(LmrError, match="a task with this name exists"):
        rename_task(renamed, "3-Other")
    with pytest.raises(LmrError, match="must be one folder name"):
        rename_task(renamed, "../x")
