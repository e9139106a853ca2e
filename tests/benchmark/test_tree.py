"""Building the evaluated tree: golden, masked and candidate variants, trusted files overlaid."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from helpers.small_task import CALC_PY, REPO, TEST_ADD, tree_hash, write_candidate, write_task
from lmrbench.core.source.tree import build_tree
from lmrbench.core.taskset import load_task
from lmrbench.core.trust import impl_test_files, trusted_paths
from lmrbench.errors import LmrError


@pytest.fixture
def task(tmp_path: Path):
    return load_task(write_task(tmp_path / "bench", dockerfile=False))


def test_golden_tree_holds_the_golden_file_byte_for_byte(task, tmp_path):
    before = tree_hash(task.path)
    tree = build_tree(task, None, "golden", tmp_path / "tree")
    assert (tree / "calc.py").read_text() == CALC_PY
    assert (tree / "unit_test" / "unit_test_1.py").read_text() == TEST_ADD
    assert tree_hash(task.path) == before


def test_golden_of_one_implementation_leaves_the_others_masked(task, tmp_path):
    tree = build_tree(task, [1], "golden", tmp_path / "tree")
    text = (tree / "calc.py").read_text()
    assert "return a + b" in text
    assert "out.append(x * k)" not in text
    assert text.count("raise NotImplementedError") == 1


def test_masked_tree_is_the_task_repo(task, tmp_path):
    tree = build_tree(task, None, "masked", tmp_path / "tree")
    assert (tree / "calc.py").read_bytes() == (task.repo_dir / "calc.py").read_bytes()


def test_candidate_contributes_only_its_goal_functions(task, tmp_path):
    hostile = CALC_PY.replace("return a + b", "return a - b").replace('return "kept"', 'return "changed"')
    hostile += "\n\nimport os\nos.environ['X'] = '1'\n"
    cand = write_candidate(tmp_path / "cand", hostile, {
        "conftest.py": "raise SystemExit(0)\n",
        "unit_test/unit_test_1.py": "def test_nothing():\n    pass\n",
        "unit_test/conftest.py": "import pytest\n",
        "README.md": "changed\n",
    })
    tree = build_tree(task, [1], cand, tmp_path / "tree")
    text = (tree / "calc.py").read_text()
    assert "return a - b" in text  # the candidate's add
    assert 'return "kept"' in text  # not its unrelated()
    assert "os.environ" not in text  # nor its module-level code
    assert "raise NotImplementedError" in text  # scale stays masked
    assert not (tree / "conftest.py").exists()
    assert not (tree / "unit_test" / "conftest.py").exists()
    assert (tree / "unit_test" / "unit_test_1.py").read_text() == TEST_ADD
    assert (tree / "README.md").read_text() == "# calc\n"


def test_candidate_given_as_a_task_folder(task, tmp_path):
    cand = tmp_path / "cand-task"
    write_candidate(cand / REPO, CALC_PY.replace("return a + b", "return b + a"))
    tree = build_tree(task, [1], cand, tmp_path / "tree")
    assert "return b + a" in (tree / "calc.py").read_text()


def test_candidate_without_the_function_is_refused_naming_the_file(task, tmp_path):
    cand = write_candidate(tmp_path / "cand", "def other():\n    return 1\n")
    with pytest.raises(LmrError, match="add"):
        build_tree(task, [1], cand, tmp_path / "tree")


def test_candidate_that_does_not_parse_is_refused(task, tmp_path):
    cand = write_candidate(tmp_path / "cand", "def add(a, b):\n    return (\n")
    with pytest.raises(LmrError) as err:
        build_tree(task, [1], cand, tmp_path / "tree")
    assert "calc.py" in str(err.value)


def test_candidate_goal_file_as_symlink_to_the_golden_file_is_refused(task, tmp_path):
    cand = tmp_path / "cand"
    cand.mkdir()
    os.symlink(task.golden_path(task.info.implementations[0]), cand / "calc.py")
    with pytest.raises(LmrError, match="symbolic link"):
        build_tree(task, [1], cand, tmp_path / "tree")


def test_missing_candidate_goal_file(task, tmp_path):
    cand = tmp_path / "empty"
    cand.mkdir()
    with pytest.raises(LmrError, match="no such goal file"):
        build_tree(task, [1], cand, tmp_path / "tree")


def test_stale_legacy_logs_are_not_carried_into_the_tree(task, tmp_path):
    logs = task.repo_dir / "unit_test" / "logs"
    logs.mkdir()
    (logs / "unit_test_1.log").write_text("Test Passed\n")
    tree = build_tree(task, None, "masked", tmp_path / "tree")
    assert not (tree / "unit_test" / "logs").exists()
    assert (logs / "unit_test_1.log").exists()


def test_declared_trusted_files_are_overlaid(tmp_path):
    path = write_task(tmp_path / "bench", dockerfile=False)
    import json

    info = json.loads((path / "info.json").read_text())
    info["implementations"][0]["trusted_files"] = ["data/expected.json"]
    (path / "info.json").write_text(json.dumps(info))
    (path / REPO / "data").mkdir()
    (path / REPO / "data" / "expected.json").write_text("[5]")
    task = load_task(path)
    assert "data/expected.json" in trusted_paths(task)
    tree = build_tree(task, [1], "golden", tmp_path / "tree")
    assert (tree / "data" / "expected.json").read_text() == "[5]"


def test_destination_must_not_exist(task, tmp_path):
    (tmp_path / "tree").mkdir()
    with pytest.raises(LmrError, match="already exists"):
        build_tree(task, None, "golden", tmp_path / "tree")


def test_method_qualnames_and_test_file_fallback(task):
    impl = task.info.implementations[0].model_copy(update={"class_name": "Calc", "goal_function": "add, sub"})
    assert impl.qualnames == ["Calc.add", "Calc.sub"]
    wrong = task.info.implementations[0].model_copy(update={"unit_test_file": "unit_test/missing.py"})
    assert impl_test_files(task, wrong) == ["unit_test/unit_test_1.py"]
    none = task.info.implementations[1].model_copy(update={"unit_test_file": "", "index": 7})
    assert impl_test_files(task, none) == []


def test_a_goal_file_linked_outside_the_task_is_refused_and_nothing_is_written_through_it(task, tmp_path):
    outside = tmp_path / "outside.py"
    outside.write_text("host file\n")
    goal = task.repo_dir / "calc.py"
    goal.unlink()
    goal.symlink_to(outside)
    cand = write_candidate(tmp_path / "cand", CALC_PY)
    with pytest.raises(LmrError, match="symbolic link leaves the task folder"):
        build_tree(task, None, cand, tmp_path / "tree")
    assert outside.read_text() == "host file\n"


def test_a_goal_file_that_is_a_link_inside_the_task_is_refused(task, tmp_path):
    goal = task.repo_dir / "calc.py"
    (task.repo_dir / "real.py").write_text(goal.read_text())
    goal.unlink()
    goal.symlink_to("real.py")
    with pytest.raises(LmrError, match="is a symbolic link"):
        build_tree(task, None, "golden", tmp_path / "tree")


def test_a_huge_sparse_goal_file_from_an_agent_is_refused_before_it_is_read(task, tmp_path):
    from lmrbench.core.source.tree import read_untrusted_goal_file

    cand = tmp_path / "cand"
    cand.mkdir()
    with open(cand / "calc.py", "wb") as fh:
        fh.truncate(3 << 30)  # 3 GB of holes: reading it would take seconds and gigabytes
    with pytest.raises(LmrError, match="over the 2000000-byte limit"):
        read_untrusted_goal_file(cand, "calc.py")


def test_the_candidates_view_holds_no_tests_or_data(task, tmp_path):
    from lmrbench.core.source.tree import candidate_view

    before = tree_hash(task.path)
    view = candidate_view(task, [1], write_candidate(tmp_path / "cand", CALC_PY))
    assert "return a + b" in (view.read_bytes("calc.py") or b"").decode()
    assert not [rel for rel, _ in view.listing() if rel.startswith("unit_test")]
    assert view.read_bytes("unit_test/unit_test_1.py") is None
    assert tree_hash(task.path) == before  # read in place, never written


def test_the_trusted_view_is_the_task_repo_without_stale_logs(task):
    from lmrbench.core.source.tree import trusted_view

    (task.repo_dir / "unit_test" / "logs").mkdir()
    (task.repo_dir / "unit_test" / "logs" / "unit_test_1.log").write_text("Test Passed")
    view = trusted_view(task)
    assert view.read_bytes("calc.py") == (task.repo_dir / "calc.py").read_bytes()
    assert view.read_bytes("unit_test/unit_test_1.py") == TEST_ADD.encode()
    assert view.read_bytes("unit_test/logs/unit_test_1.log") is None
    assert not [rel for rel, _ in view.listing() if "logs" in rel]


def test_compiled_files_never_reach_a_run_tree(task, tmp_path):
    from lmrbench.core.source.tree import candidate_view, trusted_view

    (task.repo_dir / "calc.cpython-311.pyc").write_bytes(b"golden constants")
    (task.repo_dir / "__pycache__").mkdir()
    (task.repo_dir / "__pycache__" / "calc.cpython-311.pyc").write_bytes(b"golden constants")
    for tree in (build_tree(task, None, "golden", tmp_path / "a"),):
        assert not list(tree.rglob("*.pyc"))
    for view in (trusted_view(task), candidate_view(task, [1], "golden")):
        assert not [rel for rel, _ in view.listing() if rel.endswith(".pyc") or "__pycache__" in rel]
        assert view.read_bytes("calc.cpython-311.pyc") is None


def two_file_task(tmp_path: Path, functions: list[str]):
    """A task whose implementation spans ``a.py`` (f) and ``b.py`` (g and h), naming ``functions``."""
    from helpers.tasks import Impl
    from helpers.tasks import write_task as write_task_folder

    a, b = "def f():\n    return 1\n", "def g():\n    return 2\n\n\ndef h():\n    return 3\n"
    extra = {"goal_file": ["a.py", "b.py"], "golden_file": ["golden_files/a_golden.py", "golden_files/b_golden.py"],
             "goal_function": functions}
    path = write_task_folder(tmp_path / "bench", "4-Two", repo="two", goal_file="a.py", goal=a, golden=a,
                             impls=[Impl("f", "unit_test/test_two.py", extra=extra)],
                             files={"b.py": b, "unit_test/test_two.py": "def test_x():\n    pass\n"})
    (path / "golden_files" / "b_golden.py").write_text(b)
    return load_task(path)


def test_goal_files_hold_the_functions_their_golden_versions_define(tmp_path):
    from lmrbench.authoring.record.recorded_tests import goal_targets
    from lmrbench.core.source.tree import goal_plan

    task = two_file_task(tmp_path, ["f", "g", "h"])
    impl = task.info.implementation(1)
    assert goal_plan(task, impl) == [("a.py", ["f"]), ("b.py", ["g", "h"])]
    assert goal_targets(task, impl) == [("a.py", "f"), ("b.py", "g"), ("b.py", "h")]  # recording pairs alike


def test_as_many_goal_files_as_functions_pair_one_to_one(tmp_path):
    from lmrbench.core.source.tree import goal_plan

    task = two_file_task(tmp_path / "x", ["f", "h"])
    assert goal_plan(task, task.info.implementation(1)) == [("a.py", ["f"]), ("b.py", ["h"])]
